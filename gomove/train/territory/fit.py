"""Fitting the territory CRF to positions labelled with their game's final owners.

The log-likelihood of a labelled position y (mover frame) is
    sum_i h_i y_i + sum_(i,j) w_ij y_i y_j - log Z,
so its gradient in a parameter is the parameter's data statistic minus its
expectation under the model: for a field parameter, sum of y_i minus sum of <s_i>
over the points that use it; for a coupling parameter, the same with y_i y_j
and <s_i s_j> over its pairs. ``ml`` estimates the expectations with
Swendsen-Wang sweeps (gomove.models.territory.batched, Rao-Blackwellized) run
from one persistent chain per training position (persistent contrastive
divergence: each step continues the chain where the last visit left it, so a
chain follows the model as it moves and a step costs one sweep). ``pl``
maximises the pseudo-likelihood sum_i log sigmoid(2 y_i (h_i + sum_j w_ij y_j)),
whose gradient is exact; it is also ml's warm start. ``independent`` holds the
couplings at zero: each point's owner is then independent given the position, and
the likelihood, sum_i log sigmoid(2 y_i h_i), is exact and convex (logistic
regression on the fields). It fits what the measures score, each point's own
owner, where the joint likelihood also pays for the couplings' correlations.

Points that end as neither side's (dame, 0 in the labels) add nothing to the
data statistics: the label then counts as the average of +1 and -1, an
approximation for the about 1% of points where the real game left no owner.

Parameters, Adam's state, the chains, the epoch and the RNG state are saved
after every epoch through a gomove.train.resume.Resume, so ``resume=true``
continues a killed run and gives the same model as an uninterrupted one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from gomove.models.territory import batched, sampler
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.features import batch_features
from gomove.models.territory.reading import geometry
from gomove.train.resume import Resume
from gomove.train.schemas import TerritoryConfig, compiled_engine

log = logging.getLogger(__name__)


@dataclass
class LabelledPositions:
    """Training positions as the fit reads them: feature indices and mover-frame labels."""

    field_idx: torch.Tensor  # int16[P, N, Fh]
    edge_idx: torch.Tensor  # int16[P, E, Fw]
    labels: torch.Tensor  # int8[P, N]: +1 the mover owns it at the end, -1 the other, 0 neither
    size: int

    @property
    def n_positions(self) -> int:
        return self.labels.shape[0]


def labelled_positions(
    crf: TerritoryCRF, colour: np.ndarray, to_move: np.ndarray, owner: np.ndarray, size: int
) -> LabelledPositions:
    """colour int8[P, N] and owner int8[P, N] (+1 black, -1 white), to_move int8[P] (+1 black)."""
    fi, ei = batch_features(crf.fs, colour, to_move, size, crf.player())
    labels = (owner.astype(np.int8) * to_move.astype(np.int8)[:, None]).astype(np.int8)
    return LabelledPositions(
        torch.from_numpy(fi), torch.from_numpy(ei), torch.from_numpy(labels), size
    )


def neighbour_sum(w: torch.Tensor, y: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    """sum_j w_ij y_j for every point i: [B, E], [B, N] -> [B, N]."""
    a, b = edges[:, 0].long(), edges[:, 1].long()
    out = torch.zeros_like(y)
    out.index_add_(1, a, w * y[:, b])
    out.index_add_(1, b, w * y[:, a])
    return out


def pseudo_log_likelihood(
    h: torch.Tensor, w: torch.Tensor, y: torch.Tensor, edges: torch.Tensor
) -> torch.Tensor:
    """Per position, sum over labelled points of log P(y_i | the other labels): [B]."""
    u = h + neighbour_sum(w, y, edges)
    terms = torch.nn.functional.logsigmoid(2.0 * y * u)
    return (terms * (y != 0)).sum(-1)


def energy(h: torch.Tensor, w: torch.Tensor, y: torch.Tensor, pair: torch.Tensor) -> torch.Tensor:
    """sum_i h_i y_i + sum_e w_e pair_e per position: [B] (pair: y_i y_j or its expectation)."""
    return (h * y).sum(-1) + (w * pair).sum(-1)


def edge_products(y: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    return y[:, edges[:, 0].long()] * y[:, edges[:, 1].long()]


def chain_rng(seed: int, epoch: int, step: int, idx: np.ndarray) -> np.ndarray:
    """uint64[B, 1] RNG states of the chains a step runs, fixed by (seed, epoch, step,
    position): the same config gives the same draws, however many threads run them."""
    with np.errstate(over="ignore"):
        key = np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)
        key ^= np.uint64(epoch) * np.uint64(0x8CB92BA72F3D8DD7)
        key ^= np.uint64(step) * np.uint64(0xABC98388FB8FAC03)
        return (key ^ idx.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)).reshape(-1, 1)


def numba_statistics(
    h: torch.Tensor,
    w: torch.Tensor,
    chains: torch.Tensor,
    idx: torch.Tensor,
    size: int,
    cfg: TerritoryConfig,
    epoch: int,
    step: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The model's statistics of a CPU step by the compiled sampler's parallel chains
    (the torch sweeps are the same computation, for CUDA; on the CPU they are ~50x slower)."""
    s = chains[idx].numpy().copy()
    rng = chain_rng(cfg.seed, epoch, step, idx.numpy())
    edges = geometry(size).edges
    hn = np.ascontiguousarray(h.detach().numpy())
    wn = np.ascontiguousarray(w.detach().numpy())
    mean, pair = sampler.run_chains(hn, edges, wn, s, cfg.sweeps, rng)
    chains[idx] = torch.from_numpy(s)
    return torch.from_numpy(mean), torch.from_numpy(pair)


def fit(
    crf: TerritoryCRF,
    data: LabelledPositions,
    cfg: TerritoryConfig,
    device: torch.device,
    checkpoint: Resume | None = None,
    progress: bool = False,
    on_epoch: Callable[[int, dict[str, float]], None] | None = None,
) -> list[dict[str, Any]]:
    """Train crf in place; returns the history, one dict per epoch (phase, loss)."""
    cfg.validate()
    compiled = compiled_engine(cfg.engine, device, "territory.engine")
    crf.to(device)
    edges = torch.from_numpy(geometry(data.size).edges).to(device)
    opt = torch.optim.Adam(crf.parameters(), lr=cfg.lr)
    if cfg.method == "independent":
        phases = ["independent"] * cfg.epochs
    else:
        phases = ["pl"] * (cfg.epochs if cfg.method == "pl" else cfg.pl_epochs)
        phases += ["ml"] * (cfg.epochs if cfg.method == "ml" else 0)
    labels = data.labels.to(torch.float64)
    chains = torch.where(labels >= 0, 1, -1).to(torch.int8)  # the chains start at the labels
    gen = torch.Generator(device=device)
    gen.manual_seed(cfg.seed)
    history: list[dict[str, Any]] = []
    start = 0
    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None:
        crf.load_state_dict(saved["crf"])
        opt.load_state_dict(saved["opt"])
        chains = saved["chains"]
        gen.set_state(saved["gen"])
        history = saved["history"]
        start = len(history)
    n = data.n_positions
    for epoch in range(start, len(phases)):
        phase = phases[epoch]
        order = torch.randperm(n, generator=torch.Generator().manual_seed(cfg.seed * 1000 + epoch))
        total, count = 0.0, 0
        steps = range(0, n, cfg.batch_size)
        for lo in tqdm(steps, desc=f"territory {phase} epoch {epoch + 1}", disable=not progress):
            idx = order[lo : lo + cfg.batch_size]
            fi = data.field_idx[idx].to(device)
            ei = data.edge_idx[idx].to(device)
            y = labels[idx].to(device)
            h, w = crf.potentials(fi, ei)
            if phase == "independent":
                w = torch.zeros_like(w)  # the couplings stay at zero: no gradient reaches them
            pll = pseudo_log_likelihood(h, w, y, edges)
            if phase != "ml":
                loss = -pll.mean()  # with w = 0, the exact likelihood
            else:
                if cfg.chains == "labels":
                    chains[idx] = torch.where(y >= 0, 1, -1).to(torch.int8).cpu()
                with torch.no_grad():
                    if compiled:
                        mean, pair = numba_statistics(h, w, chains, idx, data.size, cfg, epoch, lo)
                    else:
                        s0 = chains[idx].to(device).to(torch.float64)
                        s1, mean, pair = batched.run_chains(h, w, s0, edges, cfg.sweeps, 0, gen)
                        chains[idx] = s1.to(torch.int8).cpu()
                data_e = energy(h, w, y, edge_products(y, edges))
                model_e = energy(h, w, mean, pair)
                loss = -(data_e - model_e).mean()  # its gradient is the likelihood's, negated
            reg = cfg.l2 * (crf.field.square().sum() + crf.coupling.square().sum())
            opt.zero_grad()
            (loss + reg).backward()
            opt.step()
            total += float(-pll.detach().sum())
            count += len(idx)
        record = {"epoch": epoch + 1, "phase": phase, "pl_loss": total / max(count, 1)}
        history.append(record)
        log.info(
            "territory epoch %d (%s): pseudo-likelihood loss %.4f",
            epoch + 1,
            phase,
            record["pl_loss"],
        )
        if checkpoint is not None:
            checkpoint.save(
                {
                    "crf": crf.state_dict(),
                    "opt": opt.state_dict(),
                    "chains": chains,
                    "gen": gen.get_state(),
                    "history": history,
                }
            )
        if on_epoch is not None:
            on_epoch(epoch + 1, record)
    crf.cpu()
    return history
