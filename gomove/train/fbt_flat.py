"""FBT / LFR training over flat candidates on the CPU: FlatPositions (data) and FlatSGD (steps).

The padded path (gomove.train.sgd over gomove.data.loader.BatchLoader) pads
every batch to [B, M, G] and runs torch; here the training set is held flat,
as gomove.train.flat.FlatTeams holds it for MM, and a step is two compiled
loops (gomove.train.fbt_flat_kernels), no padding and no batch building:

- ``batch_grad``: per position of the mini-batch, every candidate's team sum
  s (its members' rows of table [F, 1 + k], table = (w - ||v||^2 / 2, v) as in
  FactorizationBT.team_strength) and E = s_0 + 1/2 ||s_1..k||^2, the
  log-softmax, and the gradient of the batch's mean loss w.r.t. table,
  scattered as c(m) (1, s_1..k) to every member of candidate m. The forward
  pass costs O(M G k) per position (the sampled gradient needs P_j too); the
  backward O(M G k) for the full gradient, O(S G k) for the sampled one
  (only the winner and the S draws scatter).
- ``update_params``: one Adam (or SGD) step on every w and v, the chain rule
  through the table and the L2 term included: the same objective and the
  same optimizer as torch.optim on the padded path, dense (every parameter
  every step, O(F k)), so the documented objective (gomove.models.fbt) holds
  exactly. The model's parameters are updated in place (numpy views).

Terms: ``pos`` a mini-batch of position ids (int64[B]); the epoch's order is
a seeded permutation of the positions, the sampled gradient's draws come from
uniforms of a second seeded generator, so the same config gives the same
model whatever the thread count (each kernel's sums run in a fixed order).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from gomove.data.dataset import Dataset
from gomove.data.shards import level_dtype
from gomove.features.registry import Registry
from gomove.models.fbt import FactorizationBT
from gomove.train import fbt_flat_kernels as kernels
from gomove.train.config import SGDConfig
from gomove.train.flat import FlatTeams, load_columns

NARROW = 256  # groups of fewer levels are held as uint8


class FlatPositions:
    """Training positions held flat: levels by candidate and group, no padding (~10 bytes each).

    lev8: uint8[C, G8], levw: uint16/int32[C, Gw], the groups of < 256 levels
    and the others (registry order within each), a candidate's levels side by
    side (a position in random order is one stream of memory, not G);
    offs8, offsw: int64 registry offsets of those groups; pos_start:
    int64[P + 1]; winner: int64[P], the expert's candidate within its
    position; registry: for init "mm" (``teams``). min_features: the least
    n_features a model needs for these levels (the kernels index unchecked).
    """

    def __init__(
        self,
        lev8: np.ndarray,
        offs8: np.ndarray,
        levw: np.ndarray,
        offsw: np.ndarray,
        pos_start: np.ndarray,
        winner: np.ndarray,
        registry: Registry | None = None,
    ) -> None:
        self.lev8, self.levw = lev8, levw
        self.offs8 = np.asarray(offs8, dtype=np.int64)
        self.offsw = np.asarray(offsw, dtype=np.int64)
        self.pos_start = np.ascontiguousarray(pos_start, dtype=np.int64)
        self.winner = np.ascontiguousarray(winner, dtype=np.int64)
        self.registry = registry
        self.n_positions = len(self.winner)
        self.n_candidates = int(self.pos_start[-1])
        counts = np.diff(self.pos_start)
        if self.n_positions and (counts.min() < 1 or (self.winner >= counts).any()):
            raise ValueError("every position needs a candidate and its winner among them")
        self.max_cands = int(counts.max()) if self.n_positions else 1
        for lev, offs in ((lev8, self.offs8), (levw, self.offsw)):
            if lev.ndim != 2 or lev.shape[0] != self.n_candidates or not lev.flags.c_contiguous:
                raise ValueError(f"levels: want C-contiguous [{self.n_candidates}, groups]")
            if len(offs) != lev.shape[1] or (len(offs) and offs.min() < 1):
                raise ValueError("want one offset >= 1 per group")
        # the kernels index the table unchecked: every global index must be < n_features
        tops = [
            o + int(lev.max(initial=0))
            for o, lev in zip([*self.offs8, *self.offsw], [*lev8.T, *levw.T], strict=True)
        ]
        self.min_features = max([1, *tops])

    @classmethod
    def from_levels(
        cls,
        levels: Sequence[np.ndarray],
        offsets: Sequence[int],
        sizes: Sequence[int],
        pos_start: np.ndarray,
        winner: np.ndarray,
        registry: Registry | None = None,
    ) -> FlatPositions:
        """From one level array[C] per group (registry order), their offsets and sizes."""
        c = len(levels[0]) if len(levels) else int(pos_start[-1])
        lev8, levw, cols, order = _empty_levels(c, sizes)
        for col, lv in zip(cols, levels, strict=True):
            col[:] = lv
        offs, n8 = [offsets[g] for g in order], lev8.shape[1]
        return cls(lev8, offs[:n8], levw, offs[n8:], pos_start, winner, registry)

    @classmethod
    def from_dataset(cls, ds: Dataset, progress: bool = False) -> FlatPositions:
        """A dataset's positions, read shard by shard straight into the [C, G] arrays."""
        reg = ds.registry
        lev8, levw, cols, order = _empty_levels(ds.n_candidates, [int(s) for s in reg.sizes])
        _, pos_start, winner = load_columns(ds, out=cols, progress=progress)
        offs, n8 = [int(reg.offsets[g]) for g in order], lev8.shape[1]
        return cls(lev8, offs[:n8], levw, offs[n8:], pos_start, winner, reg)

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.lev8, self.levw, self.pos_start, self.winner))

    def levels(self) -> list[np.ndarray]:
        """One level array[C] per group, in registry (offset) order (strided views, no copy)."""
        cols = [(o, lev) for o, lev in zip(self.offs8, self.lev8.T, strict=True)]
        cols += [(o, lev) for o, lev in zip(self.offsw, self.levw.T, strict=True)]
        return [lev for _, lev in sorted(cols, key=lambda r: int(r[0]))]

    def teams(self) -> FlatTeams:
        """The same positions as a FlatTeams, for MM (init "mm"); the levels are not copied."""
        if self.registry is None:
            raise ValueError("FlatPositions without a registry: cannot build FlatTeams")
        return FlatTeams(self.levels(), self.pos_start, self.winner, self.registry)


def _empty_levels(
    n_candidates: int, sizes: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[int]]:
    """lev8 [C, G8] and levw [C, Gw] (uninitialized) for groups of these sizes, each
    group's column in them (registry order), and the groups in their column order."""
    narrow = [g for g, s in enumerate(sizes) if s < NARROW]
    wide = [g for g, s in enumerate(sizes) if s >= NARROW]
    lev8 = np.empty((n_candidates, len(narrow)), dtype=np.uint8)
    wide_dtype = level_dtype(max([sizes[g] for g in wide], default=0))
    levw = np.empty((n_candidates, len(wide)), dtype=wide_dtype)
    cols = {g: lev8[:, i] for i, g in enumerate(narrow)}
    cols |= {g: levw[:, i] for i, g in enumerate(wide)}
    return lev8, levw, [cols[g] for g in range(len(sizes))], narrow + wide


class FlatSGD:
    """SGD of a CPU FactorizationBT over FlatPositions as cfg says (name, sample, optimizer...).

    Iterating gives one epoch of mini-batches (position ids, seeded order);
    ``step(pos, lr)`` trains on one, ``measure(pos)`` only evaluates; both
    return (objective, sum of log P(expert move), positions) like the padded
    path's Loss: objective is the mean loss + L2 at the parameters before the
    step (for the sampled gradient, the full softmax loss it estimates).
    """

    def __init__(self, model: FactorizationBT, data: FlatPositions, cfg: SGDConfig) -> None:
        if model.w.device.type != "cpu":
            raise ValueError("the flat engine runs on the CPU; use padded batches on CUDA")
        if model.n_features < data.min_features:
            raise ValueError(
                f"the data index {data.min_features} features, the model has {model.n_features}"
            )
        self.model, self.data, self.cfg = model, data, cfg
        # views of the parameters: the updates in place are the model's
        self.w = model.w.detach().numpy()
        self.v = model.v.detach().numpy()
        f, k = self.v.shape
        self.width = (0,) * (1 + k)  # see kernels.batch_grad
        self.table = np.zeros((f, 1 + k))
        kernels.fill_table(self.w, self.v, self.table, self.width)
        self.grad = np.zeros_like(self.table)
        self.gw, self.gv = np.zeros(f), np.zeros((f, k))  # the parameters' gradients
        self.state = [np.zeros_like(a) for a in (self.w, self.w, self.v, self.v)]
        self.n_steps = 0
        self._l2: tuple[int, float] | None = None  # (n_steps, L2 term) of the last measure
        if cfg.name == "lfr":
            self.mode = kernels.LFR
        else:
            self.mode = kernels.SAMPLED if cfg.sample else kernels.FULL
        self.n_samples = cfg.sample if self.mode == kernels.SAMPLED else 0
        self.order_rng = np.random.default_rng([cfg.seed, 0])
        self.sample_rng = np.random.default_rng([cfg.seed, 1])
        m = data.max_cands
        self.s_buf = np.empty((m, 1 + k))
        self.e_buf = np.empty(m)
        self.x_buf = np.empty(m)
        self._no_unif = np.empty((0, 0))
        self._compile()

    def _compile(self) -> None:
        """Compile (or load from the cache) the kernels for these types now, not in
        the first timed epoch: on an empty batch and on small stand-ins of the state."""
        self.loss_grad(np.zeros(0, dtype=np.int64), np.zeros((0, 1)), backward=True)
        k = self.v.shape[1]
        w, v = np.zeros(2, self.w.dtype), np.zeros((2, k), self.v.dtype)
        args = (w, v, np.zeros((2, 1 + k)), np.zeros((2, 1 + k)), np.zeros(2), np.zeros((2, k)))
        state = [np.zeros_like(a) for a in (w, w, v, v)]
        kernels.update_params(*args, *state, True, 0.0, 0.9, 0.999, 1e-8, 1, 0.0, 0.0, self.width)

    def __iter__(self) -> Iterator[np.ndarray]:
        order = self.order_rng.permutation(self.data.n_positions)
        b = self.cfg.batch_size
        for lo in range(0, len(order), b):
            yield order[lo : lo + b]

    def loss_grad(
        self, pos: np.ndarray, unif: np.ndarray | None = None, backward: bool = True
    ) -> tuple[float, float]:
        """(sum of log P(expert move), sum of the loss) over pos; with backward, the
        gradient of the mean loss w.r.t. the table in ``self.grad`` (kernels.batch_grad).

        unif: float64[B, S] in [0, 1), the sampled gradient's draws (default: new ones).
        """
        d = self.data
        pos = np.ascontiguousarray(pos, dtype=np.int64)
        mode = self.mode
        if mode == kernels.SAMPLED and backward:
            if unif is None:
                unif = self.sample_rng.random((len(pos), self.n_samples))
            # sorted, the kernel finds the draws in one pass (the same multiset of draws)
            unif = np.sort(unif, axis=1)
        else:
            unif = self._no_unif
            mode = kernels.FULL if mode == kernels.SAMPLED else mode
        return kernels.batch_grad(
            self.table,
            d.lev8,
            d.offs8,
            d.levw,
            d.offsw,
            d.pos_start,
            d.winner,
            pos,
            unif,
            mode,
            backward,
            self.grad,
            self.s_buf,
            self.e_buf,
            self.x_buf,
            self.width,
        )

    def l2(self) -> float:
        """lambda_w/2 ||w||^2 + lambda_v/2 ||v||^2 over rows 1.. (row 0 does not count)."""
        w, v = self.w[1:].astype(np.float64), self.v[1:].astype(np.float64)
        return 0.5 * (self.cfg.lambda_w * (w * w).sum() + self.cfg.lambda_v * (v * v).sum())

    def measure(self, pos: np.ndarray) -> tuple[float, float, int]:
        ll, loss = self.loss_grad(pos, backward=False)
        if self._l2 is None or self._l2[0] != self.n_steps:
            self._l2 = (self.n_steps, self.l2())
        return loss / len(pos) + self._l2[1], ll, len(pos)

    def step(self, pos: np.ndarray, lr: float, unif: np.ndarray | None = None):
        """One optimizer step on the mini-batch pos at learning rate lr."""
        ll, loss = self.loss_grad(pos, unif)
        self.n_steps += 1
        cfg = self.cfg
        adam = cfg.optimizer == "adam"
        h1, h2, eps = (0.9, 0.999, 1e-8) if adam else (cfg.momentum, 0.0, 0.0)
        l2 = kernels.update_params(
            self.w,
            self.v,
            self.table,
            self.grad,
            self.gw,
            self.gv,
            *self.state,
            adam,
            lr,
            h1,
            h2,
            eps,
            self.n_steps,
            cfg.lambda_w,
            cfg.lambda_v,
            self.width,
        )
        return loss / len(pos) + l2, ll, len(pos)
