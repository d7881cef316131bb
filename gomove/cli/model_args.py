"""``--model``, ``--policy`` and ``--territory`` of the commands that use models: the
shipped ones by default.

A command that plays or predicts takes the full model (``--model``: a run's
model.pt, a packed .npz, or ``none``) and the light playout policy
(``--policy``: a policy.npz, or ``none``); one that draws ownership maps takes
the method (``--ownership`` or ``--method``: playouts or crf) and the territory
CRF (``--territory``: a crf.pt of gomove territory train). Left out, each is the
one shipped inside the package (gomove.pretrained, docs/model-card.md); the
command says on stderr which it uses, since stdout may be a protocol channel.
"""

from __future__ import annotations

import argparse
import sys

from gomove.models.territory.crf import TerritoryCRF
from gomove.play.ownership import CRF, DEFAULT_METHOD, METHODS, PLAYOUTS
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


def add_territory_args(ap: argparse.ArgumentParser, flag: str = "--ownership") -> None:
    """flag (``--ownership``; gomove ownership's ``--method``) and ``--territory``."""
    ap.add_argument(flag, dest="ownership", choices=METHODS, default=None,
                    help=f"how ownership maps are made: by playouts or by Stern's territory "
                    f"CRF (default: {DEFAULT_METHOD}; crf when --territory is given)")  # fmt: skip
    ap.add_argument("--territory", metavar="PATH",
                    help="the territory CRF: a crf.pt of gomove territory train (default: the "
                    "shipped one); with the crf method")  # fmt: skip


def load_territory(arg: str | None) -> TerritoryCRF:
    """--territory's CRF: the shipped one when arg is None. FileNotFoundError or a
    one-line ValueError for a missing or bad file (the command exits with it)."""
    try:
        return TerritoryCRF.default() if arg is None else TerritoryCRF.load(arg)
    except ValueError as e:  # torch's reasons can run over several lines
        raise ValueError(str(e).splitlines()[0]) from None


def ownership_method(method: str | None, territory: str | None) -> str:
    """The method of --ownership/--method and --territory: as given, else crf when a
    territory model is named, else DEFAULT_METHOD."""
    if method == PLAYOUTS and territory is not None:
        raise ValueError("--territory names a territory CRF: use it with the crf method")
    return method or (CRF if territory is not None else DEFAULT_METHOD)


def territory_model(method: str | None, territory: str | None) -> TerritoryCRF | None:
    """The CRF the options ask for (load_territory), or None for playouts."""
    return load_territory(territory) if ownership_method(method, territory) == CRF else None


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


def territory_name(arg: str | None) -> str:
    return "the shipped territory CRF" if arg is None else f"the territory CRF {arg}"


def announce(
    prog: str,
    predictor: Predictor | None,
    policy_arg: str | None,
    territory: TerritoryCRF | None = None,
    territory_arg: str | None = None,
) -> None:
    """One line on stderr: which model, playouts and ownership maps the command uses."""
    model = predictor.name if predictor is not None else "none"
    own = PLAYOUTS if territory is None else territory_name(territory_arg)
    print(f"{prog}: model: {model}; playouts: {policy_name(policy_arg)}; ownership: {own}",
          file=sys.stderr, flush=True)  # fmt: skip
