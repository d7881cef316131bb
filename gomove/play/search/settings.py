"""SearchConfig: every switch of the search, so the match table can compare them.

The settings of each board size that the engines start from (the trees, the
defaults) are gomove.play.search.presets'.

The engine's settings are a typed schema as training's are (gomove.train.schemas):
``from_overrides`` reads ``key=value`` strings through OmegaConf's structured
configs, the same machinery as Hydra's overrides, so a misspelt key or a value of
the wrong type fails at once with the valid names, and ``validate`` checks ranges.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

PLAYOUTS = ("pattern", "uniform")
PW_COUNTS = ("total", "promotion")
PRIOR_SCALES = ("best", "absolute")
# the settings of the pattern playouts' answers that are probabilities
PLAYOUT_PROBABILITIES = ("tactics", "nakade", "local")
# the settings only the pattern playouts have, and what each is
PATTERN_ONLY = {
    "lgr": "last good replies",
    "tactics": "tactical answers in the playouts",
    "nakade": "vital points in the playouts",
    "local": "good shapes in the playouts",
    "selfatari_max": "a limit in the playouts",
}


@dataclass
class SearchConfig:
    """The search's settings (see gomove.play.search.kernels for their use).

    playouts: "pattern" (the light policy of policy.npz) or "uniform".
    pw: Coulom's progressive widening by the full model (model.pt); off: plain UCT,
      a leaf expanded to every move once it has expand_at visits.
    promote_at: simulations of a leaf before the full model ranks its moves
      (None: as many as the board has points, Coulom's rule).
    pw_count: the schedule counts a node's simulations in "total" or since its
      "promotion" (the paper leaves it open).
    pw_base, pw_growth: t(n+1) = t(n) + pw_base x pw_growth^n.
    rave: AMAF values in the selection (Gelly and Silver), weight by rave_k.
    c_uct: UCB1's exploration constant; fpu: the value of an unvisited child.
    lgr: the pattern playouts answer the previous move by its last good reply, learned
      from the search's simulations and forgotten when it loses (Baier and Drake,
      gomove.playout.pattern.replies), kept through a game: 0 off, 1 replies to the
      last move (LGRF-1), 2 to the last two moves first (LGRF-2).
    tactics: the probability that a pattern playout answers the previous move by a
      tactical move (captures, escapes and decisive ataris of the strings with one or
      two liberties at and next to it, gomove.playout.pattern.tactics) when there is one
      and no last good reply (0: off).
    nakade: the probability that a pattern playout answers the previous move, when
      it has neither a last good reply nor a tactical answer, by the vital point of
      the small eye space next to it (gomove.playout.pattern.nakade; 0: off).
    selfatari_max: a pattern playout's drawn move never leaves more than this many
      stones in atari, capturing nothing (gomove.board.board.big_self_atari;
      0: no limit). Such moves throw away a group that could live or make seki.
    local: the probability that a pattern playout answers the previous move, when it
      has no reply, tactical answer or vital point, by a good shape (a 3x3 gamma at
      least local_min times the open point's) next to it or to the move before, drawn
      by the playout gammas (Pachi's Moggy pattern step, gomove.playout.pattern.local; 0: off).
    pw_amaf: a ranked node opens next, instead of the model's next move, the closed
      move with the best AMAF win rate over at least pw_amaf samples (the playouts'
      opinion of moves the model ranks low; 0: off, the model's order).
    playout_power: every gamma of the playout policy raised to this power
      (LightGammas.tempered; 1: the policy as learned, below 1 flatter, above sharper).
    prior_eqex: a ranked node's children start with prior_eqex x sqrt(p / p_best)
      virtual wins from the full model's probabilities (0: off), or, with
      prior_scale="absolute", prior_eqex x sqrt(p) as Pachi's pattern prior gives
      (Pachi: 210 on 9x9, 300 on 19x19), so that the model's confidence in a
      position sets how much the tree trusts it.
    prior_min: children whose probability is below this get no prior_eqex wins
      (Pachi: 0.001; 0: every child).
    prior_even: a ranked node's children start with prior_even virtual visits at a
      win rate of 1/2 (Pachi's even prior; 0: off).
    prior_local: a ranked node's children at common-fate-graph distance 1, 2 and 3
      from the last move (gomove.board.distance) start with prior_local, 8/9 and
      1/3 of it in virtual wins (Pachi's 9x9 profile 45/40/15; 0: off). With
      pw_base=0 a ranked node opens every move at once and the priors alone order
      the search, as in Pachi.
    sims / seconds: the budget of one search (whichever ends first; None: unused).
    resign: resign when the best move's win rate is below this (0: never), after
      resign_min_sims simulations.
    pass_check: pass only when the board as it stands and the board without the
      stones the search's playouts call dead give the same winner; else play the
      best other move. The tree scores two passes as the board stands, a referee
      removes dead stones first: without the check the search may pass out a game
      with groups in atari that the referee then scores for the other side.
    reuse: keep the subtree of the moves played between searches.
    capacity: tree nodes (about 100 bytes each); chunk: simulations between clock reads.
    """

    playouts: str = "pattern"
    pw: bool = True
    promote_at: int | None = None
    pw_count: str = "total"
    pw_base: float = 40.0
    pw_growth: float = 1.4
    rave: bool = True
    rave_k: float = 1000.0
    c_uct: float = 0.2
    fpu: float = 1.1
    prior_eqex: float = 0.0
    prior_scale: str = "best"
    prior_min: float = 0.0
    prior_even: float = 0.0
    prior_local: float = 0.0
    pw_amaf: float = 0.0
    playout_power: float = 1.0
    lgr: int = 0
    tactics: float = 0.0
    nakade: float = 0.0
    selfatari_max: int = 0
    local: float = 0.0
    local_min: float = 4.0
    expand_at: int = 2
    sims: int | None = 5000
    seconds: float | None = None
    resign: float = 0.1
    resign_min_sims: int = 1000
    pass_check: bool = True
    reuse: bool = True
    capacity: int = 2_000_000
    chunk: int = 256
    seed: int = 0

    def validate(self) -> None:
        if self.playouts not in PLAYOUTS:
            raise ValueError(f"playouts must be one of {PLAYOUTS}, not {self.playouts!r}")
        if self.lgr not in (0, 1, 2):
            raise ValueError(f"lgr must be 0, 1 or 2, not {self.lgr!r}")
        for name in PLAYOUT_PROBABILITIES:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} is a probability in [0, 1], not {getattr(self, name)!r}")
        for name, what in PATTERN_ONLY.items():
            if getattr(self, name) and self.playouts != "pattern":
                raise ValueError(f"{name} ({what}) needs playouts=pattern")
        if self.prior_scale not in PRIOR_SCALES:
            raise ValueError(f"prior_scale must be one of {PRIOR_SCALES}, not {self.prior_scale!r}")
        if not 0.0 <= self.prior_min <= 1.0:
            raise ValueError(f"prior_min is a probability in [0, 1], not {self.prior_min!r}")
        if self.pw_count not in PW_COUNTS:
            raise ValueError(f"pw_count must be one of {PW_COUNTS}, not {self.pw_count!r}")
        if self.sims is None and self.seconds is None:
            raise ValueError("give a budget: sims, seconds or both")
        if self.sims is not None and self.sims < 1:
            raise ValueError(f"sims must be >= 1, not {self.sims}")
        if self.promote_at is not None and self.promote_at < 1:
            raise ValueError(f"promote_at must be >= 1 or None, not {self.promote_at}")
        if self.seconds is not None and self.seconds <= 0:
            raise ValueError(f"seconds must be > 0, not {self.seconds}")
        for name in (
            "c_uct",
            "prior_eqex",
            "prior_even",
            "prior_local",
            "pw_amaf",
            "playout_power",
            "pw_base",
            "rave_k",
            "chunk",
            "expand_at",
            "capacity",
            "selfatari_max",
            "local_min",
        ):
            if getattr(self, name) is None or getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, not {getattr(self, name)}")
        if not 0 <= self.resign < 1:
            raise ValueError(f"resign must be in [0, 1), not {self.resign}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SearchConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown search settings {sorted(unknown)}; known: {sorted(known)}")
        cfg = cls(**d)
        cfg.validate()
        return cfg

    @classmethod
    def from_overrides(
        cls, overrides: list[str], base: dict[str, Any] | None = None
    ) -> SearchConfig:
        """The settings base (a dict of fields) with ``key=value`` overrides over them,
        typed by the schema (``none`` or ``null`` for None), validated."""
        known = sorted(f.name for f in fields(cls))
        for item in overrides:
            key, sep, _ = item.partition("=")
            if not sep or key.strip() not in known:
                raise ValueError(f"--set {item!r}: expected key=value with key in {known}")
        dotlist = [_null(item) for item in overrides]
        try:
            merged = OmegaConf.merge(
                OmegaConf.structured(cls), base or {}, OmegaConf.from_dotlist(dotlist)
            )
        except OmegaConfBaseException as e:
            msg = str(e).splitlines()[0]
            raise ValueError(f"--set: {msg}; known settings: {known}") from None
        cfg = OmegaConf.to_object(merged)
        cfg.validate()
        return cfg


def _null(item: str) -> str:
    """key=none as key=null (the command line's word for None, YAML's is null)."""
    key, _, value = item.partition("=")
    return f"{key}=null" if value.strip().lower() == "none" else item
