"""FBT / LFR training over the flat layout on the CPU: CompiledSGD, the compiled SGD steps.

The padded path (gomove.train.sgd.loop over gomove.data.loader.BatchLoader) pads
every batch to [B, M, G] and runs torch; here the training set is held flat
(gomove.data.flat.FlatData, the layout MM's engines read too), and a
step is two compiled loops (gomove.train.sgd.kernels), no padding and no
batch building:

- ``batch_grad``: per position of the mini-batch, every candidate's team sum
  s (its members' rows of table [F, 1 + k], table = (w - ||v||^2 / 2, v) as in
  FactorizationBT.team_strength) and E = s_0 + 1/2 ||s_1..k||^2, the
  log-softmax, and the gradient of the batch's mean loss w.r.t. table,
  scattered as c(m) (1, s_1..k) to every member of candidate m. The forward
  pass costs O(M G k) per position (the sampled gradient needs P_j too); the
  backward O(M G k) for the full gradient, O(S G k) for the sampled one
  (only the winner and the S draws scatter).
- ``update_rows``: one Adam (or SGD) step on every w and v, the chain rule
  through the table and the L2 term included: the same objective and the
  same optimizer as torch.optim on the padded path, dense (every parameter
  every step, O(F k), on every core), so the documented objective
  (gomove.models.fbt) holds exactly. The model's parameters are updated in
  place (numpy views); the gradient is left zero for the next step.

Terms: ``pos`` a mini-batch of position ids (int64[B]); the epoch's order is
a seeded permutation of the positions, the sampled gradient's draws come from
uniforms of a second seeded generator, so the same config gives the same
model whatever the thread count (each kernel's sums run in a fixed order).
"""

from __future__ import annotations

import numpy as np

from gomove.data.flat import FlatData
from gomove.features.hierarchy import Hierarchy
from gomove.models.fbt import FactorizationBT
from gomove.train.schemas import SGDConfig
from gomove.train.sgd import kernels
from gomove.train.sgd.flat_sgd import FULL, LFR, SAMPLED, FlatSGD
from gomove.train.sgd.kernels import (
    FlatLevels,
    GradScratch,
    MiniBatch,
    Moments,
    Params,
    StepSettings,
)


class CompiledSGD(FlatSGD):
    """SGD of a CPU FactorizationBT over FlatData as cfg says (name, sample, optimizer...).

    Iterating gives one epoch of mini-batches (position ids, seeded order);
    ``step(pos, lr)`` trains on one, ``measure(pos)`` only evaluates; both
    return (objective, sum of log P(expert move), positions) like the padded
    path's Loss: objective is the mean loss + L2 at the parameters before the
    step (for the sampled gradient, the full softmax loss it estimates).
    """

    def __init__(
        self,
        model: FactorizationBT,
        data: FlatData,
        cfg: SGDConfig,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        """hierarchy (features.shapes=all): the model's parameters are raw (a pattern's
        own part); the steps read the effective table (each row summed over its chain)
        and carry its gradient back to the raw rows (features.hierarchy)."""
        if model.w.device.type != "cpu":
            raise ValueError("the compiled engine runs on the CPU; use padded batches on CUDA")
        super().__init__(model, data, cfg)
        self.data = data
        # views of the parameters: the updates in place are the model's
        self.w = model.w.detach().numpy()
        self.v = model.v.detach().numpy()
        f, k = self.v.shape
        self.width = (0,) * (1 + k)  # see kernels.batch_grad
        self.table = np.zeros((f, 1 + k))
        self.hierarchy = hierarchy
        # what the steps read: the table itself, or its chain sums, whose rows a batch
        # reads through the shape group are summed when it reads them (fresh_reads: the
        # rows whose fresh stamp is not version are stale; every step makes all stale)
        self.read = self.table if hierarchy is None else np.zeros_like(self.table)
        self.version = 0
        self.fresh = np.zeros(f if hierarchy is not None else 0, dtype=np.int64)
        self.chain = np.zeros(hierarchy.longest if hierarchy is not None else 0, np.int64)
        self.shape_field, self.shape_offset = _shape_field(data, hierarchy)
        self._fill()
        self.params = Params(self.w, self.v, self.table)
        self.grad = np.zeros_like(self.table)
        self._grad_zero = True  # update_rows leaves it so; batch_grad then need not clear it
        # the rows a batch's gradient touches, for the hierarchy's sum_up (empty: none)
        self.mark = np.zeros(f if hierarchy is not None else 0, dtype=np.uint8)
        self.state = Moments(*(np.zeros_like(a) for a in (self.w, self.w, self.v, self.v)))
        self.levels = FlatLevels(
            data.records, data.narrow_read, data.offs8, data.wide_read, data.offsw,
            data.pos_start, data.winner,
        )  # fmt: skip
        self.mode = {FULL: kernels.FULL, SAMPLED: kernels.SAMPLED, LFR: kernels.LFR}[self.gradient]
        m = data.max_cands
        self.scratch = GradScratch(np.empty((m, 1 + k)), np.empty(m), np.empty(m))
        self._no_unif = np.empty((0, 0))
        self._compile()

    def _compile(self) -> None:
        """Compile (or load from the cache) the kernels for these types now, not in
        the first timed epoch: on an empty batch and on small stand-ins of the state."""
        self.loss_grad(np.zeros(0, dtype=np.int64), np.zeros((0, 1)), backward=True)
        k = self.v.shape[1]
        w, v = np.zeros(2, self.w.dtype), np.zeros((2, k), self.v.dtype)
        params = Params(w, v, np.zeros((2, 1 + k)))
        state = Moments(*(np.zeros_like(a) for a in (w, w, v, v)))
        hp = StepSettings(True, 0.0, 0.9, 0.999, 1e-8, 1, 0.0, 0.0)
        kernels.update_rows(params, np.zeros((2, 1 + k)), state, hp, self.width)

    def _moments(self) -> list[np.ndarray]:
        return [a.copy() for a in self.state]

    def _load_moments(self, saved: list[np.ndarray]) -> None:
        for a, m in zip(self.state, saved, strict=True):
            a[...] = m

    def _rebuild(self) -> None:
        self._fill()

    def _fill(self) -> None:
        """The table from the parameters, and what the steps read from it."""
        kernels.fill_table(self.w, self.v, self.table, self.width)
        self._stale()

    def _stale(self) -> None:
        """After the table changed (a step, a rebuild): the shapes' rows of read stale
        (summed when a batch reads them), the other groups' rows (no chain) copied."""
        h = self.hierarchy
        if h is not None:
            self.version += 1
            self.read[: h.lo] = self.table[: h.lo]
            self.read[h.hi :] = self.table[h.hi :]

    def loss_grad(
        self, pos: np.ndarray, unif: np.ndarray | None = None, backward: bool = True
    ) -> tuple[float, float]:
        """(sum of log P(expert move), sum of the loss) over pos; with backward, the
        gradient of the mean loss w.r.t. the table in ``self.grad`` (kernels.batch_grad).

        unif: float64[B, S] in [0, 1), the sampled gradient's draws (default: new ones).
        """
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
        if self.hierarchy is not None:
            kernels.fresh_reads(
                self.table, self.read, self.hierarchy.up, self.fresh, self.version, self.chain,
                self.levels, pos, self.shape_field, self.shape_offset,
            )  # fmt: skip
        out = kernels.batch_grad(
            self.read,
            self.levels,
            MiniBatch(pos, unif),
            mode,
            backward,
            self.grad,
            not self._grad_zero,
            self.mark,
            self.scratch,
            self.width,
        )
        if backward:
            self._grad_zero = False
        if backward and self.hierarchy is not None:
            self.hierarchy.sum_up_marked(self.grad, self.mark)  # to the raw rows
        return out

    def _reduce(self, ll: float, loss: float, n: int, backward: bool) -> tuple[float, float, int]:
        """(log-likelihood, loss, positions) of the step's whole batch from this process's
        part; here the part is the batch (gomove.train.world spreads it over ranks)."""
        return ll, loss, n

    def l2(self) -> float:
        """lambda_w/2 ||w||^2 + lambda_v/2 ||v||^2 over rows 1.. (row 0 does not count)."""
        w, v = self.w[1:].astype(np.float64), self.v[1:].astype(np.float64)
        return 0.5 * (self.cfg.lambda_w * (w * w).sum() + self.cfg.lambda_v * (v * v).sum())

    def measure(self, pos: np.ndarray) -> tuple[float, float, int]:
        ll, loss = self.loss_grad(pos, backward=False)
        ll, loss, n = self._reduce(ll, loss, len(pos), False)
        if self._l2 is None or self._l2[0] != self.n_steps:
            self._l2 = (self.n_steps, self.l2())
        return loss / max(n, 1) + self._l2[1], ll, n

    def step(self, pos: np.ndarray, lr: float, unif: np.ndarray | None = None):
        """One optimizer step on the mini-batch pos at learning rate lr."""
        ll, loss = self.loss_grad(pos, unif)
        ll, loss, n = self._reduce(ll, loss, len(pos), True)
        self.n_steps += 1
        cfg = self.cfg
        adam = cfg.optimizer == "adam"
        h1, h2, eps = (0.9, 0.999, 1e-8) if adam else (cfg.momentum, 0.0, 0.0)
        hp = StepSettings(adam, lr, h1, h2, eps, self.n_steps, cfg.lambda_w, cfg.lambda_v)
        l2 = kernels.update_rows(self.params, self.grad, self.state, hp, self.width)
        self._grad_zero = True
        self._stale()
        return loss / max(n, 1) + l2, ll, n


def _shape_field(data: FlatData, hierarchy: Hierarchy | None) -> tuple[np.ndarray, int]:
    """The field and registry offset of the shape group in data's records (the group the
    hierarchy's chains run through); an unused stand-in without a hierarchy."""
    if hierarchy is None:
        return np.zeros(4, np.int64), 0
    if hierarchy.lo not in data.offsets:
        raise ValueError("the pattern hierarchy's shape group is not in the training data")
    _, field = data.field(data.offsets.index(hierarchy.lo))
    return np.ascontiguousarray(field, dtype=np.int64), int(hierarchy.lo)
