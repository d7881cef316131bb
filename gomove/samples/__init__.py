"""Small embedded samples of real 19x19 games, so training runs end to end on a fresh machine.

The game archives the models are meant to learn from may not be committed, so the
repository ships games of its own: GNU Go 3.8 playing itself at level 1 on 19x19
(komi 6.5, positional superko, each game opened by 2-4 random 3rd/4th-line corner
moves, then played to two passes or a resignation), one game per seed, written by
``scripts/make_sample_games.py``:

- ``gnugo-train.zip``: 60 games, seeds 1-60::

    python scripts/make_sample_games.py --games 60 --level 1 --seed 1 --jobs 2 \\
        --out gomove/samples/gnugo-train.zip

- ``gnugo-test.zip``: 15 games, seeds 1001-1015::

    python scripts/make_sample_games.py --games 15 --level 1 --seed 1001 --jobs 2 \\
        --out gomove/samples/gnugo-test.zip

They are weak games (GNU Go is far below expert strength), good for smoke tests and
demos, not for measuring a model. See README.md here for sizes and timings.
"""

from __future__ import annotations

from pathlib import Path

SAMPLES_DIR = Path(__file__).resolve().parent
SAMPLES = ("gnugo-train", "gnugo-test")


def sample_path(name: str) -> str:
    """Absolute path of the sample zip ``name`` (``gnugo-train`` or ``gnugo-train.zip``)."""
    stem = name.removesuffix(".zip")
    if stem not in SAMPLES:
        raise ValueError(f"unknown sample {name!r}; known: {', '.join(SAMPLES)}")
    return str(SAMPLES_DIR / f"{stem}.zip")
