"""FBT / LFR training over the flat layout by torch ops on any device: TorchSGD.

The twin of gomove.train.sgd.compiled.CompiledSGD (the numba engine of the CPU), step
for step: the same epoch order and sampled-gradient draws (the same seeded numpy
generators), the same objective, the same float64 table and gradient, the same
optimizer arithmetic (float64, stored in the parameters' and moments' dtype), so
that both give the same model to rounding. On CUDA it is the engine; on the CPU it
is what the tests check against CompiledSGD (``model.engine=torch``).

A step on a mini-batch of positions (gomove.data.device_flat.DeviceFlat holds the data
on the device, compact):
- gather: the batch's candidate rows and their global feature indices [R, G];
- team sums s = sum of the members' table rows [R, 1 + k] (embedding_bag), the
  strengths E = s_0 + 1/2 ||s_1..k||^2;
- the softmax per position over a padded [B, M] block (logsumexp);
- the team sums' gradient by autograd through those ops: FULL (-log P(expert)), LFR
  (the pairwise loss); SAMPLED: the poster's estimate, its coefficients c(m) drawn
  as CompiledSGD draws them (inverse CDF of the running sums, searchsorted) and
  backpropagated as the surrogate sum c(m) E_m; then the table's, each team's
  gradient added into its present members' rows (_scatter_rows);
- chain rule to w and v, the L2 term, Adam or SGD (gomove.train.sgd.kernels'
  update_rows, in torch).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from gomove.data.device_flat import DeviceFlat
from gomove.data.flat import FlatData
from gomove.features.hierarchy import Hierarchy
from gomove.models.fbt import FactorizationBT
from gomove.train.hierarchy_tensors import TorchChain
from gomove.train.schemas import SGDConfig
from gomove.train.sgd.flat_sgd import LFR, SAMPLED, FlatSGD


class TorchSGD(FlatSGD):
    """SGD of a FactorizationBT over FlatData on the model's device (module docstring).

    The interface of CompiledSGD: iterating gives an epoch of position ids;
    ``step(pos, lr)`` and ``measure(pos)`` return (objective, sum of log P(expert
    move), positions); state_dict / load_state_dict continue a run.
    """

    def __init__(
        self,
        model: FactorizationBT,
        data: FlatData,
        cfg: SGDConfig,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        """hierarchy: as CompiledSGD's (raw parameters, the chain sums read)."""
        super().__init__(model, data, cfg)
        self.device = model.w.device
        self.chain = None if hierarchy is None else TorchChain(hierarchy, self.device)
        self.flat = DeviceFlat(data, self.device)
        self.pos_start = data.pos_start  # on the host: batch sizes without a device sync
        w, v = model.w.detach(), model.v.detach()
        self.state = [torch.zeros_like(a) for a in (w, w, v, v)]  # Adam's moments / SGD's buffers
        self.table = self._table()

    def _table(self) -> torch.Tensor:
        """float64[F, 1 + k]: (w - ||v||^2 / 2, v), row 0 zero (kernels.fill_table);
        with a hierarchy, its chain sums (what the steps read)."""
        w = self.model.w.detach().to(torch.float64)
        v = self.model.v.detach().to(torch.float64)
        table = torch.cat([(w - 0.5 * (v * v).sum(1)).unsqueeze(1), v], 1)
        table[0] = 0.0
        return table if self.chain is None else self.chain.sum_down(table)

    def _moments(self) -> list[np.ndarray]:
        return [a.cpu().numpy().copy() for a in self.state]

    def _load_moments(self, saved: list[np.ndarray]) -> None:
        for a, m in zip(self.state, saved, strict=True):
            a.copy_(torch.as_tensor(m))

    def _rebuild(self) -> None:
        self.table = self._table()

    def loss_grad(
        self, pos: np.ndarray, unif: np.ndarray | None = None, backward: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """(sum of log P(expert move), sum of the loss, the gradient of the mean loss
        w.r.t. the table or None): kernels.batch_grad's quantities, the sums as 0-d
        tensors on the device (read by the caller in one sync)."""
        n = len(pos)
        if n == 0:
            zero = torch.zeros((), dtype=torch.float64, device=self.device)
            return zero, zero, torch.zeros_like(self.table) if backward else None
        dev = self.device
        pos = np.asarray(pos, dtype=np.int64)
        host_counts = self.pos_start[pos + 1] - self.pos_start[pos]  # no device sync
        positions = torch.as_tensor(pos, device=dev)
        rows, seg, first = self.flat.rows(positions, int(host_counts.sum()))
        counts = self.flat.pos_start[positions + 1] - self.flat.pos_start[positions]
        win = first + self.flat.winner[positions]  # the experts' indices in rows
        m = int(host_counts.max())
        col = torch.arange(len(seg), device=dev) - first[seg]
        idx = self.flat.indices(rows)
        # row 0 (absent) is zero: padding_idx skips its lookups
        s = F.embedding_bag(idx, self.table, mode="sum", padding_idx=0)
        with torch.set_grad_enabled(backward):
            s.requires_grad_(backward)  # the graph starts at the team sums (below)
            e = s[:, 0] + 0.5 * (s[:, 1:] * s[:, 1:]).sum(1)
            # the softmax over each position's candidates, padded to [n, m] (no atomics)
            pad = torch.full((n, m), -torch.inf, dtype=e.dtype, device=dev)
            pad = pad.index_put((seg, col), e)
            ll = e[win] - torch.logsumexp(pad, 1)
            if self.gradient == LFR:
                loss = self._lfr_loss(e, seg, win, counts, n)
            else:
                loss = -ll.sum()
            if not backward:
                return ll.sum(), loss, None
            if self.gradient == SAMPLED:
                if unif is None:
                    unif = self.sample_rng.random((n, self.n_samples))
                x = torch.exp(e.detach() - pad.detach().amax(1)[seg])  # as batch_grad's
                coef = self._sampled_coef(x, seg, col, first, counts, win, unif, m)
                surrogate = (coef * e).sum()
            else:
                surrogate = loss / n
            (grad_s,) = torch.autograd.grad(surrogate, s)
        grad = _scatter_rows(idx, grad_s, self.table.shape)
        if self.chain is not None:
            grad = self.chain.sum_up(grad)  # to the raw rows
        return ll.detach().sum(), loss.detach(), grad

    def _lfr_loss(self, e, seg, win, counts, n) -> torch.Tensor:
        """Sum over positions of the mean over the other candidates o of
        softplus(E_o - E_winner); 0 for a position with one candidate."""
        d = F.softplus(e - e[win][seg])
        others = (counts - 1).to(e.dtype)
        d = torch.where(torch.arange(len(e), device=e.device) == win[seg], 0.0, d)
        per = torch.zeros(n, dtype=e.dtype, device=e.device).index_add(0, seg, d)
        return torch.where(counts > 1, per / others.clamp(min=1), 0.0).sum()

    def _sampled_coef(
        self, x, seg, col, first, counts, win, unif: np.ndarray, m: int
    ) -> torch.Tensor:
        """c(m) of every row: 1 / (S B) per draw of m from P (the first m whose running
        sum exceeds u z, as batch_grad draws), -1 / B at the expert; col: each row's
        index within its position; m: the most candidates of a position."""
        n, dev = len(counts), x.device
        padded = torch.full((n, m), torch.inf, dtype=x.dtype, device=dev)
        padded[seg, col] = x
        run = torch.cumsum(padded, 1)  # the running sums; inf past each position's end
        z = run[torch.arange(n, device=dev), counts - 1]
        u = torch.as_tensor(np.sort(unif, axis=1), dtype=x.dtype, device=dev)
        pick = torch.searchsorted(run.contiguous(), (u * z[:, None]).contiguous(), right=True)
        pick = torch.minimum(pick, (counts - 1)[:, None])
        coef = torch.zeros(len(x), dtype=x.dtype, device=dev)
        draws = (first[:, None] + pick).reshape(-1)
        coef.index_add_(0, draws, torch.full_like(draws, 1, dtype=x.dtype) / (u.shape[1] * n))
        coef.index_add_(0, win, torch.full((n,), -1.0 / n, dtype=x.dtype, device=dev))
        return coef

    def _l2_term(self, w64: torch.Tensor, v64: torch.Tensor) -> torch.Tensor:
        """The L2 term of the parameters w64, v64 (float64; 0-d, on their device; row 0
        none)."""
        w, v = w64[1:], v64[1:]
        return 0.5 * (self.cfg.lambda_w * (w * w).sum() + self.cfg.lambda_v * (v * v).sum())

    def l2(self) -> float:
        w, v = self.model.w.detach(), self.model.v.detach()
        return float(self._l2_term(w.to(torch.float64), v.to(torch.float64)))

    def measure(self, pos: np.ndarray) -> tuple[float, float, int]:
        ll, loss, _ = self.loss_grad(pos, backward=False)
        if self._l2 is None or self._l2[0] != self.n_steps:
            self._l2 = (self.n_steps, self.l2())
        ll, loss = torch.stack([ll, loss]).tolist()
        return loss / max(len(pos), 1) + self._l2[1], ll, len(pos)

    def step(self, pos: np.ndarray, lr: float, unif: np.ndarray | None = None):
        """One optimizer step on the mini-batch pos at learning rate lr (one device sync)."""
        ll, loss, grad = self.loss_grad(pos, unif)
        self.n_steps += 1
        l2 = self._update(grad, lr)
        ll, loss, l2 = torch.stack([ll, loss, l2]).tolist()
        return loss / max(len(pos), 1) + l2, ll, len(pos)

    @torch.no_grad()
    def _update(self, grad: torch.Tensor, lr: float) -> torch.Tensor:
        """kernels.update_rows: the parameters' gradients (chain rule through the
        table, L2, row 0 none), one Adam or SGD step, the table refreshed; returns the
        L2 term before the step (0-d, on the device)."""
        cfg = self.cfg
        w, v = self.model.w, self.model.v
        w64, v64 = w.to(torch.float64), v.to(torch.float64)
        g0 = grad[:, 0]
        gw = g0 + cfg.lambda_w * w64
        gv = grad[:, 1:] - g0[:, None] * v64 + cfg.lambda_v * v64
        gw[0], gv[0] = 0.0, 0.0
        l2 = self._l2_term(w64, v64)
        a_w, b_w, a_v, b_v = self.state
        if cfg.optimizer == "adam":
            _adam(w, w64, gw, a_w, b_w, lr, self.n_steps)
            _adam(v, v64, gv, a_v, b_v, lr, self.n_steps)
        else:
            _sgd(w, w64, gw, a_w, lr, cfg.momentum, self.n_steps)
            _sgd(v, v64, gv, a_v, lr, cfg.momentum, self.n_steps)
        self.table = self._table()
        return l2


def _scatter_rows(idx: torch.Tensor, grad_s: torch.Tensor, shape) -> torch.Tensor:
    """The table's gradient from its team sums': each row of grad_s [R, 1 + k] added to
    the table rows its team reads (idx [R, G]), the absent (row 0) left out. On an H200
    this is ten times faster than embedding_bag's own backward (1.4 against 14.9 ms a
    batch of 1,024 positions, docs/logs/gpu.md): most of the batch's members are absent,
    and dropping them first spares the atomic adds that serialize on row 0."""
    members = idx.reshape(-1)
    keep = torch.nonzero(members).squeeze(1)
    out = torch.zeros(shape, dtype=grad_s.dtype, device=grad_s.device)
    return out.index_add_(0, members[keep], grad_s[keep // idx.shape[1]])


def _adam(p, p64, g, m, s, lr: float, step: int, b1=0.9, b2=0.999, eps=1e-8) -> None:
    """kernels._adam (torch.optim.Adam's update) in float64, stored in p's, m's, s's dtype."""
    mi = m.to(torch.float64)
    mi = mi + (1.0 - b1) * (g - mi)
    si = b2 * s.to(torch.float64) + (1.0 - b2) * g * g
    m.copy_(mi)
    s.copy_(si)
    bc1 = 1.0 - b1**step
    bc2_sqrt = (1.0 - b2**step) ** 0.5
    p.copy_(p64 - lr / bc1 * mi / (torch.sqrt(si) / bc2_sqrt + eps))


def _sgd(p, p64, g, buf, lr: float, momentum: float, step: int) -> None:
    """kernels._sgd: Nesterov momentum (the buffer read back as stored), or plain SGD."""
    if momentum > 0.0:
        buf.copy_(g if step == 1 else momentum * buf.to(torch.float64) + g)
        g = g + momentum * buf.to(torch.float64)
    p.copy_(p64 - lr * g)
