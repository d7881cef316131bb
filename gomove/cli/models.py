"""``--model`` and ``--policy`` of the commands that use models: the shipped ones by default.

A command that plays or predicts takes the full model (``--model``: a run's
model.pt, a packed .npz, or ``none``) and the light playout policy
(``--policy``: a policy.npz, or ``none``). Left out, each is the one shipped
inside the package (gomove.pretrained, docs/model-card.md); the command says on
stderr which it uses, since stdout may be a protocol channel.
"""

from __future__ import annotations

import argparse
import sys

from gomove.play.predict import Predictor
from gomove.playout.policy import PatternPolicy

NONE = "none"


def add_model_args(ap: argparse.ArgumentParser, model: bool = True, policy: bool = True) -> None:
    if model:
        ap.add_argument("--model", metavar="PATH|none",
                        help="the full model: a run's model.pt or a packed .npz (default: the "
                        "shipped model; none: no model)")  # fmt: skip
    if policy:
        ap.add_argument("--policy", metavar="PATH|none",
                        help="the light playout policy: a policy.npz of train.py features=light "
                        "(default: the shipped policy; none: uniform playouts)")  # fmt: skip


def load_model(arg: str | None) -> Predictor | None:
    """--model's predictor: the shipped one when arg is None, no model for 'none'."""
    if arg == NONE:
        return None
    return Predictor.default() if arg is None else Predictor.from_checkpoint(arg)


def load_policy(arg: str | None) -> PatternPolicy | None:
    """--policy's playout policy: the shipped one when arg is None, uniform for 'none'."""
    if arg == NONE:
        return None
    return PatternPolicy.default() if arg is None else PatternPolicy.load(arg)


def policy_name(arg: str | None) -> str:
    if arg == NONE:
        return "uniform playouts"
    return "the shipped light policy" if arg is None else f"the light policy {arg}"


def announce(prog: str, predictor: Predictor | None, policy_arg: str | None) -> None:
    """One line on stderr: which model and playouts the command uses."""
    model = predictor.name if predictor is not None else "none"
    print(f"{prog}: model: {model}; playouts: {policy_name(policy_arg)}", file=sys.stderr,
          flush=True)  # fmt: skip
