"""``gomove warmup``: compile the engine's kernels once, ahead of the first game.

gomove warmup                  # with the shipped model and policy
gomove warmup --force          # again, though a warm-up already ran
gomove warmup --pack DIR       # then the compiled code as a wheel ships it (setup.py)

numba compiles each kernel the first time it runs and keeps the code on disk, so
after an install the first genmove or analysis waits minutes. This runs each
part of the engines once on tiny inputs, saying each step on stderr; gomove gtp
and gomove analysis do the same in the background at their first start. A wheel
built by ``pip install .`` ships the compiled code (--pack, gomove.kernel_cache):
the first start after such an install loads it and compiles nothing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gomove.cli import doc_parser
from gomove.kernel_cache import kernel_key, pack
from gomove.play.warmup import default_models, is_warm, stamp_path, warm


def main(argv: list[str] | None = None) -> int:
    ap = doc_parser("gomove warmup", __doc__)
    ap.add_argument("--force", action="store_true", help="run even when already warm")
    ap.add_argument("--pack", metavar="DIR", help="then write numba's cache of gomove into DIR "
                    "as a wheel ships it (gomove/_numba: setup.py's step)")  # fmt: skip
    args = ap.parse_args(argv)
    if is_warm() and not args.force and not args.pack:
        print(f"gomove warmup: already warm ({stamp_path()}); --force runs it again",
              file=sys.stderr)  # fmt: skip
        return 0
    warm(*default_models())
    if args.pack:
        n = pack(Path(os.environ["NUMBA_CACHE_DIR"]), Path(args.pack), kernel_key())
        print(f"gomove warmup: {n} files of compiled code packed into {args.pack}",
              file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
