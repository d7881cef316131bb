"""Stochastic gradient training of the factorized models: FBT (full or sampled gradient) and LFR.

Terms:
- epoch: one pass over the training positions in shuffled mini-batches; the
  learning rate follows ``schedule`` as a function of the fractional epoch
  (updated every batch), so "cosine" decays smoothly to 0 at the last batch.
- loss: gomove.train.sgd.losses' ``fbt_loss`` (sample = 0), ``sampled_fbt_grad_loss``
  (sample = S > 0, the poster's approximate gradient) or ``lfr_loss`` (name =
  "lfr"); each is a mean over the batch's positions plus the full L2 term.
- init: "random" (w = 0, v ~ N(0, init_std^2)); "mm" (w from ``mm_iters`` MM
  iterations on the same training data, gomove.train.mm.fit.train_mm); or a
  saved model (``init``, the model of ``init_checkpoint``, ``load_init``): its level
  strengths become w (an mm model's
  log-gammas, an fbt/lfr model's w) and, from an fbt/lfr model of the same
  k, v too.
- engine: the data and ``engine`` decide. gomove.data.flat.FlatData (what the
  experiment builds when ``flat`` is true) trains by compiled loops over the flat
  candidates on the CPU (gomove.train.sgd.compiled.CompiledSGD, engine numba) or by
  their torch twin on any device (gomove.train.sgd.tensor.TorchSGD, engine torch;
  "auto": numba on the CPU, torch elsewhere), the same model to rounding; a
  BatchLoader or a list of Batches by torch over padded batches and torch.optim,
  on any device (gomove.train.sgd.padded.PaddedSGD). All minimize the same objective
  with the same optimizer; the flat engines compute in float64, and there the sampled
  gradient's backward costs O(S) per position instead of O(M).

Reproducible: the parameters, the shuffling and the sampling draw from
generators seeded by ``seed``; the same config gives the same model on CPU.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm.auto import tqdm

from gomove.data.batch import Batch
from gomove.data.flat import FlatData
from gomove.data.loader import BatchLoader
from gomove.models import MoveModel
from gomove.models.checkpoint import load_checkpoint
from gomove.models.fbt import FactorizationBT
from gomove.train.context import TrainContext
from gomove.train.hierarchy_tensors import collapse, uncollapse
from gomove.train.mm.fit import train_mm
from gomove.train.monitor import Validate, report_row
from gomove.train.resume import Resume
from gomove.train.schemas import MMConfig, SGDConfig, compiled_engine
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.sgd.distributed import DistributedSGD
from gomove.train.sgd.flat_sgd import PassCut
from gomove.train.sgd.padded import PaddedSGD
from gomove.train.sgd.tensor import TorchSGD

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger(__name__)


def lr_factor(cfg: SGDConfig, epoch: float) -> float:
    """Multiplier of cfg.lr at fractional epoch ``epoch`` in [0, cfg.epochs]."""
    if cfg.schedule == "constant":
        return 1.0
    if cfg.schedule == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * min(epoch / max(cfg.epochs, 1), 1.0)))
    return cfg.lr_gamma ** math.floor(epoch / cfg.lr_step)


class _Shuffled:
    """A list of Batches in a new seeded order every epoch (a BatchLoader shuffles itself)."""

    def __init__(self, batches: Sequence[Batch], seed: int) -> None:
        self.batches = list(batches)
        self.rng = np.random.default_rng(seed)

    def __iter__(self):
        for i in self.rng.permutation(len(self.batches)):
            yield self.batches[i]


def positions_of(data: Iterable[Batch]) -> int:
    """The positions an epoch of padded batches visits (BatchLoader or a list of Batches)."""
    if isinstance(data, BatchLoader):
        return len(data)
    return sum(len(b) for b in data)


def shuffled(data: Iterable[Batch], cfg: SGDConfig) -> Iterable[Batch]:
    """Training batches for SGD (``positions_of`` counts their positions).

    A BatchLoader is re-made with cfg.batch_size, shuffle=True and cfg.seed
    (a new permutation of the positions every epoch);
    any other iterable is taken as a fixed list of batches, visited in a seeded
    random order.
    """
    if isinstance(data, BatchLoader):
        return BatchLoader(
            data.dataset,
            batch_size=cfg.batch_size,
            shuffle=True,
            seed=cfg.seed,
            device=data.device,
            max_positions=data.max_positions,
        )
    return _Shuffled(list(data), cfg.seed)


def init_from_mm(model: FactorizationBT, log_gamma: torch.Tensor) -> FactorizationBT:
    """Set w to a Bradley-Terry model's log-gammas (Tensor[F]; index 0 must be 0); v unchanged.

    With small v the FBT model then starts where MM ended: E = log gamma(team).
    """
    if log_gamma.shape != model.w.shape:
        raise ValueError(
            f"log_gamma has shape {tuple(log_gamma.shape)}, want {tuple(model.w.shape)}"
        )
    with torch.no_grad():
        model.w.copy_(log_gamma.to(model.w))
        model.w[0] = 0.0
    return model


def initial_model(
    cfg: SGDConfig,
    data: Iterable[Batch] | FlatData,
    ctx: TrainContext,
    init: MoveModel | None = None,
) -> FactorizationBT:
    """The starting model of ``init`` or cfg.init (module docstring), on ``ctx.device``.

    data: the training data, which init "mm" fits MM on first (FlatData or padded
    Batches, gomove.train.mm.fit.train_mm with the same engine choice).
    """
    gen = torch.Generator().manual_seed(cfg.seed)
    n_features = ctx.n_features
    model = FactorizationBT(n_features, cfg.k, cfg.init_std, generator=gen)
    if cfg.init_checkpoint and init is None:
        raise ValueError("init_checkpoint: pass its model as init (load_init)")
    if init is not None:
        w = init.level_strength()
        if w.shape[0] != n_features:
            raise ValueError(f"init: {w.shape[0]} features, the data has {n_features}")
        with torch.no_grad():
            model.w.copy_(w.to(model.w))
            if isinstance(init, FactorizationBT) and init.v.shape == model.v.shape:
                model.v.copy_(init.v.detach().to(model.v))
    elif cfg.init == "mm":
        mm_cfg = MMConfig(max_iters=cfg.mm_iters, tol=0.0, seed=cfg.seed, engine=cfg.engine)
        mm_ctx = TrainContext(n_features, ctx.groups, ctx.device, progress=ctx.progress,
                              world=ctx.world)  # fmt: skip
        mm, _ = train_mm(mm_cfg, data, mm_ctx)
        init_from_mm(model, mm.log_gamma.cpu())
        log.info("init: w from %d MM iterations", cfg.mm_iters)
    return model.to(ctx.device)


def load_init(cfg: SGDConfig, ctx: TrainContext) -> MoveModel | None:
    """The model of cfg.init_checkpoint (None without one), its registry checked against
    the data's (ctx.registry, when known)."""
    if not cfg.init_checkpoint:
        return None
    state = load_checkpoint(cfg.init_checkpoint)
    if ctx.registry is not None and state["extractor"].registry != ctx.registry:
        raise ValueError(f"{cfg.init_checkpoint}: its feature registry differs from the data's")
    log.info("init from %s (%s)", cfg.init_checkpoint, state["model_name"])
    return state["module"]


def train_sgd(
    cfg: SGDConfig,
    data: Iterable[Batch] | FlatData,
    ctx: TrainContext,
    init: MoveModel | None = None,
) -> tuple[FactorizationBT, list[dict[str, Any]]]:
    """Fit an FBT or LFR model by SGD; return it and one history row per epoch.

    data: FlatData (the compiled engine, CPU), a BatchLoader (re-made shuffled,
    see ``shuffled``) or a list of Batches. Row 0 is the start (one no-grad
    pass); every row has iter (the epoch), loss (the objective: mean loss +
    L2, averaged over the epoch's batches as training went), log_likelihood
    (mean log P(expert move) under the softmax, likewise), seconds (training
    only, wall time), cpu_seconds (the process's CPU time: on a shared
    machine, the cost without the waiting), lr (at the epoch's end), and
    val_top1 / val_log_evidence when ctx.validate is given (report.Validate).
    ctx.writer gets train/loss, train/log_likelihood, train/lr, val/top1,
    val/log_evidence and time/seconds_per_epoch. init: the saved model to start from
    (module docstring; by default cfg.init_checkpoint's, ``load_init``).
    ctx.checkpoint: the train state is saved there after every epoch (row 0 included),
    and within a pass (the start's measuring pass too) at a chunk's end when its ``due``
    (data read in chunks, the flat engines: ``FlatSGD.cut``), and, with its ``resume``,
    continued from: on the CPU the same model and history (times apart) as an
    uninterrupted run, bit for bit. ctx.world: the ranks
    (gomove.train.world), each holding its share of the positions in
    FlatData: every step's batch is spread over them, the gradient all-reduced.
    ctx.hierarchy (features.shapes=all): every pattern of a candidate's chain in its
    team; the engines train raw parameters (gomove.features.hierarchy; the train state
    holds them), validation and the model returned the effective ones, a largest-only
    model.
    """
    cfg.validate()
    world, validate, writer, checkpoint = ctx.world, ctx.validate, ctx.writer, ctx.checkpoint
    hierarchy, device = ctx.hierarchy, ctx.device
    if cfg.keep_best is not None and world.distributed:
        # rank 0 alone validates; every rank scores its share of the test set
        raise ValueError("model.keep_best picks an epoch on one process: run it without torchrun")
    if cfg.keep_best is not None and validate is None:
        raise ValueError(f"{cfg.needs_validation()}: set data.val")
    if init is None:
        init = load_init(cfg, ctx)
    torch.manual_seed(cfg.seed)
    flat = isinstance(data, FlatData)
    compiled = flat and compiled_engine(cfg.engine, device, "model.engine")
    if world.distributed and not compiled:
        raise ValueError(
            "several processes train fbt/lfr on the numba engine: CPU, model.flat=true"
        )
    state = checkpoint.load() if checkpoint is not None else None
    init_cfg = cfg
    if state is not None:  # the saved parameters replace any init: no MM to run first
        init_cfg, init = replace(cfg, init="random", init_checkpoint=None), None
    model = initial_model(init_cfg, data, ctx, init)
    if hierarchy is not None and (init_cfg.init == "mm" or init is not None):
        model = uncollapse(model, hierarchy)  # an effective start, as raw parameters
    if flat:
        (total,) = world.sum(data.n_positions)
        n_positions = int(total)
    else:
        data = data if isinstance(data, BatchLoader) else list(data)  # counted, then shuffled
        n_positions = positions_of(data)
    if n_positions == 0:
        raise ValueError("no training positions")
    if cfg.l2_positions is not None or cfg.batch_size is None:
        cfg = cfg.for_positions(n_positions)
        log.info("for %d positions: lambda_w %.3g, lambda_v %.3g, batch_size %d",
                 n_positions, cfg.lambda_w, cfg.lambda_v, cfg.batch_size)  # fmt: skip
    if not flat:
        batches = shuffled(data, cfg)
    steps: CompiledSGD | TorchSGD | PaddedSGD
    if compiled:
        if world.distributed:
            steps = DistributedSGD(model, data, cfg, world, hierarchy)
        else:
            steps = CompiledSGD(model, data, cfg, hierarchy)
    elif flat:
        steps = TorchSGD(model, data, cfg, hierarchy)
    else:
        steps = PaddedSGD(model, batches, n_positions, cfg, device, hierarchy)

    def effective() -> FactorizationBT:
        return model if hierarchy is None else collapse(model, hierarchy)

    best = _BestEpoch(cfg.keep_best)
    history: list[dict[str, Any]] = []
    seen = 0  # positions trained on (the schedule's clock)
    within = None  # a pass saved at a chunk's end: the start's measuring pass or an epoch
    if state is not None:
        model.load_saved(state["model"])
        steps.load_state_dict(state["steps"])
        torch.set_rng_state(state["torch_rng"])
        np.random.set_state(state["numpy_rng"])
        history, seen = state["history"], state["seen"]
        best.load_state_dict(state.get("best"))
        within = state.get("within")
        done = history[-1]["iter"] if history else None
        if within is None:
            log.info("%s: resumed after epoch %d", cfg.name, done)
        else:
            steps.continue_pass(PassCut.from_dict(within["cut"]))
            log.info("%s: resumed in epoch %d after %d of its chunks", cfg.name,
                     0 if done is None else done + 1, within["cut"]["done"])  # fmt: skip

    def pass_sums() -> _Sums:
        """A new pass's sums, or those of the pass saved within (once)."""
        nonlocal within
        sums = _Sums()
        if within is not None:
            sums.load_state_dict(within["sums"])
            within = None
        return sums

    def save_within(sums: _Sums) -> None:
        """At a chunk's end, when a save is due: the state with where the pass stands."""
        cut = steps.cut()
        if cut is not None and checkpoint is not None and checkpoint.due():
            at = {"cut": cut.to_dict(), "sums": sums.state_dict()}
            _save(checkpoint, model, steps, history, seen, best, at)

    def batches(desc: str):
        """A pass's batches under a progress bar (an epoch can take an hour)."""
        return tqdm(steps, desc=desc, total=steps.n_batches(), leave=False,
                    disable=not ctx.progress)  # fmt: skip

    if not history:  # the start, measured (row 0)
        sums = pass_sums()
        for batch in batches("measuring the start"):
            sums.add(*steps.measure(batch))
            save_within(sums)
        history.append(sums.row(0, cfg.lr * lr_factor(cfg, 0)))
        _report(history[-1], effective(), validate, writer)
        best.see(history[-1], model)
        _save(checkpoint, model, steps, history, seen, best)

    first = history[-1]["iter"] + 1
    bar = tqdm(range(first, cfg.epochs + 1), desc=cfg.name.upper(), disable=not ctx.progress)
    for epoch in bar:
        sums = pass_sums()
        for batch in batches(f"epoch {epoch}"):
            lr = cfg.lr * lr_factor(cfg, seen / n_positions)
            objective, log_lik, n = steps.step(batch, lr)
            if not math.isfinite(objective):
                raise FloatingPointError(
                    f"non-finite loss in epoch {epoch} at lr {lr:.3g}: training diverged, "
                    "lower model.lr"
                )
            sums.add(objective, log_lik, n)
            seen += n
            save_within(sums)
        row = sums.row(epoch, lr)
        history.append(row)
        _report(row, effective(), validate, writer)
        best.see(row, model)
        _save(checkpoint, model, steps, history, seen, best)
        bar.set_postfix(loss=f"{row['loss']:.4f}", ll=f"{row['log_likelihood']:.4f}")
    bar.close()
    best.restore(model, history, cfg.name)
    model = effective()
    model.eval()
    return model, history


def _save(
    checkpoint: Resume | None,
    model: FactorizationBT,
    steps: CompiledSGD | TorchSGD | PaddedSGD,
    history: list[dict[str, Any]],
    seen: int,
    best: _BestEpoch,
    within: dict[str, Any] | None = None,
) -> None:
    """Save what the loop carries after an epoch: parameters, the engine's optimizer
    and generators, the global RNGs (seeded too), history, positions seen and the best
    epoch so far (model.keep_best); within an epoch, at a chunk's end, also where the
    pass stands and the epoch's sums so far (``within``)."""
    if checkpoint is None:
        return
    checkpoint.save(
        {
            "model": _copy(model),
            "steps": steps.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "numpy_rng": np.random.get_state(),
            "history": history,
            "seen": seen,
            "best": best.state_dict(),
            "within": within,
        }
    )


def _copy(model: FactorizationBT) -> dict[str, torch.Tensor]:
    """The model's parameters, copied to the CPU (the engines go on updating theirs)."""
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


class _BestEpoch:
    """The parameters of the epoch best by one validation measure (model.keep_best).

    ``see`` each reported row (the start's too); ``restore`` loads the best epoch's
    parameters into the model once training ends and records it in the last row as
    ``kept_iter``. A None measure keeps nothing: the last epoch is the model."""

    def __init__(self, measure: str | None) -> None:
        self.key = None if measure is None else f"val_{measure}"
        self.iter: int | None = None
        self.score = -math.inf
        self.params: dict[str, torch.Tensor] | None = None

    def see(self, row: dict[str, Any], model: FactorizationBT) -> None:
        if self.key is not None and row[self.key] > self.score:  # ties keep the earlier
            self.iter, self.score, self.params = row["iter"], row[self.key], _copy(model)

    def restore(self, model: FactorizationBT, history: list[dict[str, Any]], name: str) -> None:
        if self.params is None:
            return
        if self.iter != history[-1]["iter"]:
            model.load_saved(self.params)
        history[-1]["kept_iter"] = self.iter
        log.info("%s: keeping epoch %d, the best by %s (%.5f)", name, self.iter, self.key,
                 self.score)  # fmt: skip

    def state_dict(self) -> dict[str, Any] | None:
        if self.params is None:
            return None
        return {"iter": self.iter, "score": self.score, "params": self.params}

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        if state is not None:
            self.iter, self.score, self.params = state["iter"], state["score"], state["params"]


class _Sums:
    """Position-weighted running means of one pass's objective and log-likelihood, and
    its wall and CPU time from when it was made (plus an earlier attempt's part)."""

    def __init__(self) -> None:
        self.objective = 0.0
        self.log_lik = 0.0
        self.n = 0
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def add(self, objective: float, log_lik: float, n: int) -> None:
        self.objective += objective * n
        self.log_lik += log_lik
        self.n += n

    def state_dict(self) -> dict[str, Any]:
        return {"objective": self.objective, "log_lik": self.log_lik, "n": self.n,
                "seconds": time.perf_counter() - self.t0,
                "cpu_seconds": time.process_time() - self.c0}  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the sums saved within a pass (its time so far counted as spent)."""
        self.objective, self.log_lik, self.n = state["objective"], state["log_lik"], state["n"]
        self.t0 -= state["seconds"]
        self.c0 -= state["cpu_seconds"]

    def row(self, it: int, lr: float) -> dict[str, Any]:
        """The history row of the pass."""
        n = max(self.n, 1)
        return {
            "iter": it,
            "loss": self.objective / n,
            "log_likelihood": self.log_lik / n,
            "seconds": time.perf_counter() - self.t0,
            "cpu_seconds": time.process_time() - self.c0,
            "lr": lr,
        }


SGD_SCALARS = (
    ("loss", "train/loss", "loss {:.5f}"),
    ("log_likelihood", "train/log_likelihood", "log-lik {:.5f}"),
    ("lr", "train/lr", "lr {:.2e}"),
    ("seconds", "time/seconds_per_epoch", "{:.2f}s"),
)


def _report(
    row: dict[str, Any],
    model: FactorizationBT,
    validate: Validate | None,
    writer: SummaryWriter | None,
) -> None:
    """Add validation measures to ``row``, log it and write it to TensorBoard."""
    report_row(row, model.log_probs, validate, writer, SGD_SCALARS, log, "epoch")
