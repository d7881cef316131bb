"""Engine presets: the search's settings for each board size, from an engine's options.

The strongest settings measured are the defaults of ``gomove gtp`` and ``gomove
analysis`` (docs/engine.md, docs/matches/); both build their searches here, so the two
engines play with the same settings.

Terms:
- tree: how the full model steers the tree (``--tree``): Pachi's prior with every
  move of a ranked node open ("pachi", ``pachi_prior``), Pachi's prior with Coulom's
  schedule ("pachi-pw", ``pachi_pw_prior``) or Coulom's progressive widening with his
  priors ("coulom", SearchConfig's own defaults); "auto" is the strongest measured for
  the board size (``DEFAULT_TREE``).
- sets: ``--set key=value`` strings, any SearchConfig field, laid over a tree's
  settings, which lie over the engine's base settings (``engine_settings``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from gomove.play.predict import Predictor
from gomove.play.search.settings import SearchConfig


def pachi_prior(size: int) -> dict[str, Any]:
    """The settings that use the full model in the tree as Pachi's uct/prior.c uses its
    pattern probabilities (its defaults: eqex 14 on small boards, 20 on large ones;
    the pattern prior 300 x eqex / 20 virtual wins x sqrt(p), none below p = 0.001;
    the even prior eqex visits at 1/2; a leaf expanded after 8 playouts with every
    move open; no UCB term; equiv_rave 3000 or 4000)."""
    large = size >= 15  # Pachi's board_large
    eqex = 20 if large else 14
    return dict(
        pw_base=0.0,
        promote_at=8,
        prior_eqex=300.0 * eqex / 20,
        prior_scale="absolute",
        prior_min=0.001,
        prior_even=float(eqex),
        c_uct=0.0,
        rave_k=4000.0 if large else 3000.0,
    )


def pachi_pw_prior(size: int) -> dict[str, Any]:
    """Pachi's prior (pachi_prior) with Coulom's widening schedule: a ranked node opens
    its moves one by one as its visits grow (pw_base 40), and a leaf is ranked by the
    full model when first searched (promote_at None), not after 8 playouts. On 19x19 the
    model's moves wait their turn, where opening all 361 at once spreads the search."""
    return {**pachi_prior(size), "pw_base": 40.0, "promote_at": None}


# the SearchConfig fields each tree sets for a board size (module docstring)
TREE_SETTINGS = {"pachi": pachi_prior, "pachi-pw": pachi_pw_prior, "coulom": lambda size: {}}


TREES = tuple(TREE_SETTINGS)


# The strongest tree measured for each board size, the default (each choice's match
# record: docs/engine.md, "The defaults for each board size"); sizes between take the
# nearer one.
DEFAULT_TREE = {9: "pachi", 13: "pachi", 19: "pachi-pw"}


def default_tree(size: int) -> str:
    """DEFAULT_TREE for a board size (the nearest measured size; ties to the smaller)."""
    nearest = min(DEFAULT_TREE, key=lambda s: (abs(s - size), s))
    return DEFAULT_TREE[nearest]


def tree_settings(tree: str, size: int) -> dict[str, Any]:
    """The SearchConfig fields a tree choice sets for a board size ("auto": the default)."""
    if tree == "auto":
        tree = default_tree(size)
    if tree not in TREE_SETTINGS:
        raise ValueError(f"unknown tree {tree!r}; one of auto, {', '.join(TREES)}")
    return TREE_SETTINGS[tree](size)


def search_config(sets: list[str], base: dict | None = None) -> SearchConfig:
    """SearchConfig from --set key=value strings over base (SearchConfig.from_overrides)."""
    return SearchConfig.from_overrides(sets, base)


def tree_config(sets: list[str], base: dict, tree: str, size: int) -> SearchConfig:
    """The settings for a board size: the tree's (tree_settings) over base, sets over both."""
    return search_config(sets, {**base, **tree_settings(tree, size)})


def engine_settings(
    sets: list[str], tree: str, base: dict, predictor: Predictor | None, playouts: bool
) -> tuple[SearchConfig, Callable[[int], SearchConfig] | None]:
    """(the search settings, the settings for each board size or None) of gtp's and
    analysis's options: no model, no widening; no policy (playouts False), uniform
    playouts; the tree's settings for each size when the model is in the tree."""
    base = dict(base)
    if predictor is None:
        base["pw"] = False
    if not playouts:
        base["playouts"] = "uniform"
    cfg = search_config(sets, base)
    if not cfg.pw:
        if tree != "auto" and tree_settings(tree, 19):  # the tree sets the model's prior
            raise ValueError(
                f"--tree {tree} needs the full model in the tree (a model, no --no-pw)"
            )
        return cfg, None
    sized = partial(tree_config, sets, base, tree)
    sized(9), sized(13), sized(19)  # an error in --set shows now, not at boardsize
    return cfg, sized
