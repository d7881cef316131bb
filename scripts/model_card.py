"""Write gomove/pretrained/card.json: the shipped model's record and its answers on fixed
positions, which tests/test_pretrained.py checks and docs/model-card.md shows.

    python scripts/model_card.py [--evaluation RUN/metrics.json ...]

--evaluation: the metrics.json of `gomove evaluate checkpoint=gomove/pretrained/model.npz`
runs (the test month, the validation month), copied into the card.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gomove import pretrained
from gomove.atomic import atomic_write_json
from gomove.board.board import BLACK, new_board, play
from gomove.board.coords import gtp_to_loc
from gomove.models.checkpoint import load_checkpoint
from gomove.play.predict import Predictor

# (name, board size, moves from the empty board, black first)
POSITIONS = (
    ("19x19 empty board", 19, ()),
    ("19x19 opening", 19, ("Q16", "D4", "Q3", "D16", "R5", "C14", "O4", "F17")),
    ("9x9 middle game", 9, ("E5", "C3", "G7", "C7", "G3", "E3", "D4", "F4", "E4", "F3")),
)
TOP = 5


def answers(predictor) -> list[dict]:
    out = []
    for name, size, moves in POSITIONS:
        b, color = new_board(size), BLACK
        for v in moves:
            play(b, gtp_to_loc(v, size), color)
            color = 3 - color
        pred = predictor.predict(b, color)
        out.append({"name": name, "size": size, "moves": list(moves),
                    "top": [[v, round(p, 6)] for v, p in pred.top(TOP)]})  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evaluation", nargs="*", default=[], metavar="NAME=METRICS.json")
    args = ap.parse_args()
    state = load_checkpoint(pretrained.MODEL)
    card = {
        "model": {"file": pretrained.MODEL.name, "bytes": pretrained.MODEL.stat().st_size,
                  "kind": state["model_name"], "source": state["source"]},
        "policy": {"file": pretrained.POLICY.name, "bytes": pretrained.POLICY.stat().st_size},
        "evaluation": {},
        "positions": answers(Predictor.default()),
    }  # fmt: skip
    for item in args.evaluation:
        name, _, path = item.partition("=")
        m = json.loads(Path(path).read_text())
        keep = ("n_games", "n_positions", "top1", "log_evidence", "mean_rank", "rank_error")
        card["evaluation"][name] = {k: m[k] for k in keep if k in m} | {
            "top10": m["topn"][9] if len(m.get("topn", [])) >= 10 else None
        }
    atomic_write_json(pretrained.HERE / "card.json", card)
    print(json.dumps(card, indent=1))


if __name__ == "__main__":
    main()
