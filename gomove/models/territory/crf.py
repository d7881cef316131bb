"""Stern's territory predictor: a conditional random field over the final owner of every
point, given the position.

    P(s | c) = exp( sum_i h_i s_i + sum_(i,j) w_ij s_i s_j ) / Z(c)

s_i = +1 when the side to move ends up owning point i (its stone, or territory
only its stones surround), -1 when the opponent does; (i, j) runs over
orthogonal neighbours. The fields h_i and couplings w_ij are sums of learned
parameters picked by the position's features (gomove.models.territory.features:
``stern``, the talk's energies, or ``rich``). Queried by Swendsen-Wang sampling
(gomove.models.territory.sampler): each point's expected owner and the
distribution of the area score, sum_i s_i minus komi.

``crf.pt`` (``save``/``load``): a plain torch dict, read with weights_only. A model on
the pmc features carries the gammas of the pattern policy whose playouts it reads
(``policy``), so that it reads the same playouts wherever it is loaded, whatever
policy gomove ships then.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numba import njit

from gomove import pretrained
from gomove.atomic import atomic_write
from gomove.board.board import BLACK, SIZE, Board, signed_points
from gomove.features.light_gammas import LightGammas
from gomove.models.territory.features import FeatureSet, feature_set, features
from gomove.models.territory.judge import StringJudge
from gomove.models.territory.reading import geometry
from gomove.models.territory.sampler import chain_rng, first_spins, run_chain
from gomove.playout.pattern.playout import PatternPlayer, pattern_player
from gomove.playout.pattern.tables import build_tables

FORMAT = "gomove-territory-crf"
VERSION = 1
SWEEPS = 100  # Swendsen-Wang sweeps a query averages (after BURN): ~3 ms on 19x19
BURN = 10


@njit(cache=True)
def gather_sum(table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """float64 out[i] = sum_k table[idx[i, k]]: a query's potentials without numpy's
    [N, K] temporary (a tenth of a query's time on 19x19)."""
    out = np.empty(idx.shape[0], np.float64)
    for i in range(idx.shape[0]):
        a = 0.0
        for k in range(idx.shape[1]):
            a += table[idx[i, k]]
        out[i] = a
    return out


@dataclass(frozen=True)
class TerritoryEstimate:
    """The CRF's answer for one position, in absolute colours (sgfmill [row, col]).

    black: P(black owns each point) float64[size, size] (white owns the rest: the
    model has no dame); mean_score, score_stdev: the area score B - W - komi;
    sweeps: how many sweeps were averaged, 0 when the answer is exact (a model
    without couplings).
    """

    black: np.ndarray
    mean_score: float
    score_stdev: float
    sweeps: int

    @property
    def expected_owner(self) -> np.ndarray:
        """E[owner], +1 black, -1 white: P(black) - P(white)."""
        return 2.0 * self.black - 1.0


def policy_tensors(policy: LightGammas) -> dict[str, torch.Tensor]:
    """A light policy's gammas as crf.pt keeps them: the 3x3 patterns' (about 95% of them
    1, the neutral gamma) as the indices and values of the others, the rest whole."""
    state = {f.name: torch.from_numpy(np.asarray(getattr(policy, f.name), np.float64))
             for f in fields(LightGammas) if f.name != "pattern"}  # fmt: skip
    index = np.flatnonzero(policy.pattern != 1.0)
    state["pattern_size"] = torch.tensor(len(policy.pattern))
    state["pattern_index"] = torch.from_numpy(index.astype(np.int32))
    state["pattern_value"] = torch.from_numpy(policy.pattern[index].astype(np.float64))
    return state


def policy_from_tensors(state: dict[str, torch.Tensor]) -> LightGammas:
    """The LightGammas that policy_tensors wrote (ValueError or TypeError when malformed)."""
    parts = {k: v.numpy() for k, v in state.items() if not k.startswith("pattern_")}
    pattern = np.ones(int(state["pattern_size"]), np.float64)
    pattern[state["pattern_index"].numpy()] = state["pattern_value"].numpy()
    return LightGammas(pattern=pattern, **parts)


class TerritoryCRF(torch.nn.Module):
    """Parameters: ``field`` float64[n_field], ``coupling`` float64[n_coupling]."""

    def __init__(self, features: str = "rich", policy: LightGammas | None = None) -> None:
        super().__init__()
        self.fs: FeatureSet = feature_set(features)
        if self.fs.policy and policy is None:
            raise ValueError(f"territory features {features!r} need a playout policy's gammas")
        self.policy = policy if self.fs.policy else None
        self._player: PatternPlayer | None = None
        self.field = torch.nn.Parameter(torch.zeros(self.fs.n_field, dtype=torch.float64))
        self.coupling = torch.nn.Parameter(torch.zeros(self.fs.n_coupling, dtype=torch.float64))
        self.meta: dict[str, Any] = {}
        self.judge: StringJudge | None = None  # the dead strings' judge, when fitted

    @property
    def features(self) -> str:
        return self.fs.name

    def player(self) -> PatternPlayer | None:
        """The playout player of the pmc features (built once); None for the others."""
        if self.policy is not None and self._player is None:
            self._player = pattern_player(build_tables(self.policy))
        return self._player

    @property
    def independent(self) -> bool:
        """No couplings (``territory.method=independent``): the points' owners are
        independent given the position, so a query is exact and needs no sampling."""
        return not bool(self.coupling.detach().any())

    def potentials(
        self, field_idx: torch.Tensor, edge_idx: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """h [..., N] and w [..., E] from feature indices [..., N, Fh] and [..., E, Fw]."""
        h = self.field[field_idx.long()].sum(-1)
        w = self.coupling[edge_idx.long()].sum(-1)
        return h, w

    def position_potentials(
        self, colour: np.ndarray, to_move: int, size: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """float64 h[N], w[E] of one position (colour int8[N]: +1 black, -1 white, 0 empty)."""
        fi, ei = features(self.fs, colour, to_move, size, self.player(), not self.independent)
        field = self.field.detach().cpu().numpy()
        if self.independent:  # every coupling 0: no need to index or sum them
            return gather_sum(field, fi), np.zeros(geometry(size).edges.shape[0])
        return gather_sum(field, fi), gather_sum(self.coupling.detach().cpu().numpy(), ei)

    def estimate(
        self,
        colour: np.ndarray,
        to_move: int,
        size: int,
        komi: float,
        sweeps: int = SWEEPS,
        burn: int = BURN,
        seed: int = 0,
    ) -> TerritoryEstimate:
        """Swendsen-Wang estimate for a position given as signed colours (int8[N]); exact,
        with no sampling, where the position's couplings are all zero."""
        if sweeps < 1:
            raise ValueError(f"need at least one sweep, not {sweeps}")
        h, w = self.position_potentials(colour, to_move, size)
        sign = 1.0 if to_move > 0 else -1.0
        if not w.any():  # independent points: E[s_i] = tanh(h_i), the score's variance adds up
            mean = np.tanh(h)
            return TerritoryEstimate(
                black=(0.5 * (1.0 + sign * mean)).reshape(size, size),
                mean_score=float(sign * mean.sum() - komi),
                score_stdev=float(np.sqrt((1.0 - mean * mean).sum())),
                sweeps=0,
            )
        s = first_spins(h, seed)
        mean, _, totals = run_chain(
            h, geometry(size).edges, w, s, sweeps, burn, chain_rng(seed), False
        )
        black = 0.5 * (1.0 + sign * mean)
        scores = sign * totals - komi
        return TerritoryEstimate(
            black=np.clip(black, 0.0, 1.0).reshape(size, size),
            mean_score=float(sign * mean.sum() - komi),  # Rao-Blackwellized mean
            score_stdev=float(scores.std()),
            sweeps=sweeps,
        )

    def predict(
        self,
        board: Board,
        to_move: int,
        komi: float,
        sweeps: int = SWEEPS,
        burn: int = BURN,
        seed: int = 0,
    ) -> TerritoryEstimate:
        """estimate for a Board with to_move (BLACK or WHITE) to play."""
        mover = 1 if to_move == BLACK else -1
        size = int(board.info[SIZE])
        return self.estimate(signed_points(board), mover, size, komi, sweeps, burn, seed)

    def save(self, path: str | Path, meta: dict[str, Any] | None = None) -> Path:
        state = {
            "format": FORMAT,
            "version": VERSION,
            "features": self.features,
            "field": self.field.detach().cpu(),
            "coupling": self.coupling.detach().cpu(),
            "meta": dict(self.meta, **(meta or {})),
        }
        if self.judge is not None:
            state["judge"] = self.judge.state()
        if self.policy is not None:
            state["policy"] = policy_tensors(self.policy)
        atomic_write(path, lambda f: torch.save(state, f))
        return Path(path)

    @classmethod
    def default(cls) -> TerritoryCRF:
        """The territory model shipped in the package (gomove.pretrained.TERRITORY)."""
        if not pretrained.TERRITORY.exists():
            raise FileNotFoundError(pretrained.missing(pretrained.TERRITORY))
        return cls.load(pretrained.TERRITORY)

    @classmethod
    def load(cls, path: str | Path) -> TerritoryCRF:
        """A crf.pt written by save; a clear ValueError for anything else."""
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except FileNotFoundError:
            raise
        except Exception as e:  # torch raises many kinds for a file that is not its own
            raise ValueError(f"{path}: not a territory model ({type(e).__name__}: {e})") from None
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise ValueError(f"{path}: not a territory model (no {FORMAT!r} format tag)")
        if state.get("version") != VERSION:
            raise ValueError(
                f"{path}: territory model version {state.get('version')}, want {VERSION}"
            )
        try:
            policy = state.get("policy")
            crf = cls(state["features"], None if policy is None else policy_from_tensors(policy))
        except (TypeError, ValueError, KeyError, IndexError) as e:
            raise ValueError(f"{path}: {e}") from None
        with torch.no_grad():
            if (
                state["field"].shape != crf.field.shape
                or state["coupling"].shape != crf.coupling.shape
            ):
                raise ValueError(f"{path}: parameter shapes do not match features {crf.features!r}")
            crf.field.copy_(state["field"])
            crf.coupling.copy_(state["coupling"])
        crf.meta = dict(state.get("meta", {}))
        if "judge" in state:  # files written before the judge have none
            crf.judge = StringJudge.from_state(state["judge"])
        return crf
