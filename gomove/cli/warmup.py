"""``gomove warmup``: compile the engine's kernels once, ahead of the first game.

gomove warmup                  # with the shipped model and policy
gomove warmup --force          # again, though a warm-up already ran

numba compiles each kernel the first time it runs and keeps the code on disk, so
after an install the first genmove or analysis waits minutes. This runs each
part of the engines once on tiny inputs, saying each step on stderr; gomove gtp
and gomove analysis do the same in the background at their first start.
"""

from __future__ import annotations

import sys

from gomove.cli import doc_parser
from gomove.play.warmup import default_models, is_warm, stamp_path, warm


def main(argv: list[str] | None = None) -> int:
    ap = doc_parser("gomove warmup", __doc__)
    ap.add_argument("--force", action="store_true", help="run even when already warm")
    args = ap.parse_args(argv)
    if is_warm() and not args.force:
        print(f"gomove warmup: already warm ({stamp_path()}); --force runs it again",
              file=sys.stderr)  # fmt: skip
        return 0
    warm(*default_models())
    return 0


if __name__ == "__main__":
    sys.exit(main())
