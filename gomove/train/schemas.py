"""Config schemas of the one Hydra tree of ``gomove train``: a typo in an override fails
at once, clearly.

Groups mirror the code: ``data`` (``DataConfig``), ``features``
(gomove.features.config.FeatureConfig), ``model`` (one schema per trainer, a
``ModelConfig``: the move models' ``MMConfig`` for mm, ``SGDConfig`` for fbt and lfr,
``RankerConfig`` for pr, bar and lbr; ``TerritoryConfig`` for the territory CRF,
``BalanceConfig`` for simulation balancing; which schema a name uses is
gomove.train.trainers.TRAINERS, which also registers them all in Hydra's
ConfigStore, ``register``). Every model group reads its ``seed`` from the top level.

Top-level ``k`` and ``sample`` exist so that ``python train.py model=fbt k=5
sample=10`` works as written: configs/model/fbt.yaml sets ``k: ${k}`` and
``sample: ${sample}``, so the model group reads them (``model.k=5`` works
too, replacing the interpolation). ``model=mm`` ignores both.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from omegaconf import MISSING

from gomove.features.config import FeatureConfig

if TYPE_CHECKING:  # the numba engines train without importing torch
    import torch

ENGINES = ("auto", "numba", "torch")
CALIBRATE_BY = ("likelihood", "bins")  # gomove.train.calibrate


def compiled_engine(engine: str, device: torch.device, what: str) -> bool:
    """Whether ``engine`` (ENGINES) on device means the numba engine: "auto" picks it on
    the CPU and torch elsewhere; "numba" off the CPU is refused (what: the setting)."""
    if engine not in ENGINES:
        raise ValueError(f"{what} must be one of {ENGINES}, not {engine!r}")
    if engine == "numba" and device.type != "cpu":
        raise ValueError(f"{what}=numba runs on the CPU only, not on {device}")
    return engine == "numba" or (engine == "auto" and device.type == "cpu")


@dataclass
class DataConfig:
    name: str = MISSING
    # a path or a list of paths of any kind the reader takes (file, folder, zip, tar, glob)
    train: Any = MISSING
    val: Any = None
    test: Any = MISSING
    max_games: int | None = None  # training games (first N in file order)
    max_val_games: int | None = None
    max_test_games: int | None = None
    sizes: list[int] = field(default_factory=lambda: [19])
    handicap: bool = True
    min_moves: int = 0
    strict: bool = False
    superko: bool = True
    cache_dir: str = "cache"
    shard_games: int = 100  # games a chunk of extraction: what a killed one resumes after
    batch_size: int = 512
    workers: int | None = None  # extraction processes (None: all cores)
    # read the training data in chunks of this many positions, for data larger than
    # memory (gomove.data.chunks): MM's streaming engine, FBT/LFR epochs chunk by chunk;
    # None: all of it mapped at once, as it fits
    chunk_positions: int | None = None


@dataclass
class ModelConfig:
    """What every model config group holds (gomove/configs/model/<name>.yaml).

    name: the trainer, a key of gomove.train.trainers.TRAINERS.
    seed: seeds the model's training (the yaml reads the top-level ``seed``).
    """

    name: str = MISSING
    seed: int = 0

    def validate(self) -> None:
        """Raise ValueError on a bad combination of fields (before any data is read)."""

    def needs_validation(self) -> str | None:
        """Why this config needs the validation set (data.val), None if it does not:
        checked when the config is read, before the extraction (gomove.train.trainers)."""
        return None


@dataclass
class MoveModelConfig(ModelConfig):
    """What a move-prediction model's group adds (gomove.train.move_models).

    flat: train on the flat layout (gomove.data.flat.FlatData) with the model's
        engine over it (``engine`` where the model has one); false: padded batches
        cut from that layout.
    """

    flat: bool = True


@dataclass
class EngineConfig(MoveModelConfig):
    """What MM and FBT/LFR share: an engine over the flat layout and a calibration after.

    engine: "auto" (numba on the CPU, torch elsewhere), "numba" (CPU only) or "torch"
        (any device: the CUDA path, checkable on the CPU).
    calibrate: after training, fit the softmax temperature on the validation set and
        fold it into the parameters (gomove.train.calibrate; needs data.val).
    calibrate_by: "likelihood" (the temperature of the likeliest expert moves) or
        "bins" (the temperature and probability floor closest to the calibration
        bins' diagonal).
    """

    engine: str = "auto"
    calibrate: bool = False
    calibrate_by: str = "likelihood"

    def needs_validation(self) -> str | None:
        if self.calibrate:
            return "model.calibrate=true fits a temperature on the validation set"
        return None

    def validate(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"model.engine must be one of {ENGINES}, not {self.engine!r}")
        if self.calibrate_by not in CALIBRATE_BY:
            raise ValueError(
                f"model.calibrate_by must be one of {CALIBRATE_BY}, not {self.calibrate_by!r}"
            )


MM_SCHEDULES = ("cyclic", "greedy", "lazy", "auto")
MM_ORDERS = ("size", "file")
TEAM_DTYPES = ("float32", "float64")


@dataclass
class MMConfig(EngineConfig):
    """Coulom's MM (gomove.train.mm.fit): schedule and stopping rule.

    max_iters: at most this many iterations (sweeps).
    tol: stop once every group's last update gained less than tol log-posterior
        per position, i.e. a whole sweep gained little. The default, 1e-4, is
        mm.cpp's own threshold: with the default order it ends as converged as
        mm.cpp's run (on 300 games -2.93829 after 26 sweeps against mm.cpp's
        -2.93841; docs/logs/exports.md).
    schedule: "cyclic", "greedy" or "lazy" (see gomove.train.mm.loop): lazy sweeps
        only the groups whose last update gained at least tol, all of them when none
        did, and stops as cyclic does, after a full sweep that gained less than tol;
        "auto": lazy over data read in chunks, cyclic over data in memory
        (gomove.train.mm.fit.resolve_schedule).
    order: the order of a cyclic sweep and of greedy's first round: "size",
        the groups with most gammas first (shapes first: on 300 games cyclic
        MM then reaches mm.cpp's final log-posterior in 25 sweeps instead of
        42, greedy in 117 updates instead of 180), or "file", the registry's
        order (as mm.cpp sweeps its competition file).
    seed: seeds torch at the start; MM itself is deterministic, so it only
        matters for data iterables that draw random numbers.
    flat: the flat layout and cached team strengths (~10 bytes per candidate,
        ~10x faster than padded batches).
    team_dtype: "float32" or "float64", the cached team strengths of the CPU
        engine (gomove.train.mm.compiled.NumbaMM); sums are float64 either way.
    prior_wins: the prior's virtual wins of every gamma, and as many losses, against
        gamma 1 (gomove.train.mm.loop.log_prior; Coulom's 1). More hold rarely seen
        patterns nearer 1, or with ``features.shapes=all`` nearer their parents.
    warm_positions: with data read in chunks (``data.chunk_positions``, the streaming
        engine, a pass a group update over all the data), first fit MM to convergence
        on this many of the first training positions held in memory (the cached
        engine, several times faster a pass), then go on from those gammas over all
        the data: the same fixed point, reached in fewer passes over the disk. None:
        from gamma = 1.
    engine, calibrate, calibrate_by: EngineConfig's (engines: gomove.train.mm.compiled,
        gomove.train.mm.tensor).
    """

    name: str = "mm"
    max_iters: int = 100
    tol: float = 1e-4
    schedule: str = "cyclic"
    order: str = "size"
    team_dtype: str = "float32"
    prior_wins: float = 1.0
    warm_positions: int | None = None

    def validate(self) -> None:
        super().validate()
        if self.warm_positions is not None and self.warm_positions < 1:
            raise ValueError(f"warm_positions must be >= 1 or null, not {self.warm_positions}")
        if not self.prior_wins > 0:
            raise ValueError(f"prior_wins must be positive, not {self.prior_wins}")
        if self.schedule not in MM_SCHEDULES:
            raise ValueError(f"schedule must be one of {MM_SCHEDULES}, not {self.schedule!r}")
        if self.order not in MM_ORDERS:
            raise ValueError(f"order must be one of {MM_ORDERS}, not {self.order!r}")
        if self.team_dtype not in TEAM_DTYPES:
            raise ValueError(f"team_dtype must be one of {TEAM_DTYPES}, not {self.team_dtype!r}")


SCHEDULES = ("constant", "cosine", "step")
OPTIMIZERS = ("adam", "sgd")
INITS = ("random", "mm")
# the validation measures an SGD run may keep its best epoch by (higher is better)
KEEP_BEST = ("top1", "log_evidence")


@dataclass
class SGDConfig(EngineConfig):
    """FBT/LFR training. Defaults: chosen on the embedded sample (docs/concepts.md).

    name: "fbt" (softmax over all candidates) or "lfr" (pairwise, winner vs each other).
    k: latent dimension (0: no interactions, Bradley-Terry fitted by gradient).
    lr, schedule ("constant" | "cosine" | "step": times lr_gamma every lr_step epochs).
    epochs, batch_size (positions per step; None: ``auto_batch_size`` of the training
    positions, so that the sample and all training games both train in good time).
    lambda_w, lambda_v: L2 weights (added in full to every batch's mean loss).
    l2_positions: the training positions lambda_w and lambda_v are meant for. With
    N positions they are scaled by l2_positions / N: a Gaussian prior of fixed
    strength, whose share of the mean loss shrinks as the data grows (MM's
    virtual games likewise). None: used as given, whatever N.
    init ("random" | "mm"), mm_iters (MM iterations for init "mm"),
    init_checkpoint (a model.pt to start from; overrides init), init_std (of v).
    sample: 0 for the full gradient, S > 0 for the sampled gradient (fbt only).
    optimizer: "adam" or "sgd" (with ``momentum``, Nesterov when momentum > 0).
    keep_best: None keeps the last epoch's parameters; "top1" or "log_evidence" keeps
    those of the epoch (the start included) best by that validation measure, so that
    a run trained past its best does not ship an over-fitted model (needs data.val).
    seed: parameters, shuffling, sampling.
    flat: the flat layout (false: padded batches and torch.optim, any device).
    engine, calibrate, calibrate_by: EngineConfig's (engines: gomove.train.sgd.compiled,
    gomove.train.sgd.tensor; both give the same model).
    """

    name: str = "fbt"
    k: int = 10
    lr: float = 0.02
    schedule: str = "cosine"
    lr_gamma: float = 0.1
    lr_step: int = 10
    epochs: int = 10
    batch_size: int | None = None
    lambda_w: float = 1e-5
    lambda_v: float = 1e-4
    l2_positions: int | None = None
    init: str = "random"
    mm_iters: int = 3
    init_checkpoint: str | None = None
    init_std: float = 0.01
    sample: int = 0
    optimizer: str = "adam"
    momentum: float = 0.9
    keep_best: str | None = None

    def needs_validation(self) -> str | None:
        if self.keep_best is not None:
            return f"model.keep_best={self.keep_best} picks an epoch by validation"
        return super().needs_validation()

    def validate(self) -> None:
        super().validate()
        if self.name not in ("fbt", "lfr"):
            raise ValueError(f"name must be 'fbt' or 'lfr', not {self.name!r}")
        if self.name == "lfr" and self.sample:
            raise ValueError("sample applies to fbt only (LFR has no softmax to sample from)")
        for key, value, allowed in (
            ("schedule", self.schedule, SCHEDULES),
            ("optimizer", self.optimizer, OPTIMIZERS),
            ("init", self.init, INITS),
        ):
            if value not in allowed:
                raise ValueError(f"{key} must be one of {allowed}, not {value!r}")
        if self.keep_best is not None and self.keep_best not in KEEP_BEST:
            raise ValueError(
                f"keep_best must be null or one of {KEEP_BEST}, not {self.keep_best!r}"
            )
        if self.k < 0 or self.sample < 0 or self.epochs < 0:
            raise ValueError("k, sample and epochs must be >= 0")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 or null (auto), not {self.batch_size}")
        if self.l2_positions is not None and self.l2_positions < 1:
            raise ValueError(f"l2_positions must be >= 1 or null, not {self.l2_positions}")

    def for_positions(self, n_positions: int) -> SGDConfig:
        """This config for n_positions training positions: the L2 weights scaled
        (``l2_for``) and an auto batch size chosen (``auto_batch_size``)."""
        cfg = self.l2_for(n_positions)
        if cfg.batch_size is None:
            cfg = replace(cfg, batch_size=auto_batch_size(n_positions))
        return cfg

    def l2_for(self, n_positions: int) -> SGDConfig:
        """This config with the L2 weights for n_positions training positions
        (see l2_positions); itself when l2_positions is None."""
        if self.l2_positions is None:
            return self
        f = self.l2_positions / max(n_positions, 1)
        return replace(self, lambda_w=self.lambda_w * f, lambda_v=self.lambda_v * f,
                       l2_positions=None)  # fmt: skip


# An auto batch: a power of two in [128, 1024], the largest that still takes at least
# AUTO_STEPS optimizer steps an epoch. Adam's progress goes with its steps, so small
# data keeps small batches (the sample's 12,825 positions: 128, as tuned there); a
# step also updates every parameter, so large data takes large batches (all 27,613
# training games: 1,024, about 165 s an epoch where 128 took more than 13 minutes).
# At 1,000 Tygem games (219,176 positions: 1,024) 1,024 and 128 give the same test
# top-1 (docs/logs/scale.md).
AUTO_BATCH = (128, 1024)
AUTO_STEPS = 200


def auto_batch_size(n_positions: int) -> int:
    """The batch size of ``batch_size=None`` for n_positions training positions."""
    lo, hi = AUTO_BATCH
    b = lo
    while b * 2 <= hi and n_positions // (b * 2) >= AUTO_STEPS:
        b *= 2
    return b


RANKERS = ("pr", "bar", "lbr")


@dataclass
class RankerConfig(MoveModelConfig):
    """The comparison paper's rankers (gomove.train.rankers.fit; Wistuba et al. 2012, III).

    name: "pr" (win rates), "bar" (Weng and Lin's Bayesian approximation,
        Algorithm 1) or "lbr" (Stern et al.'s Thurstone-Mosteller ranking of
        pattern teams by expectation propagation).
    single: a move is its largest matched shape alone, no tactical groups
        (Stern et al.'s original Bayesian full ranking; "no shape" is a level).
    passes: passes over the training positions (bar, lbr).
    shuffle: visit the positions in a random order (seeded, a new one each pass)
        instead of game by game: a filter's updates then do not follow one game's
        correlated positions in a row (bar, lbr; on 10,000 games +0.07 (BAR) and
        +0.09 (LBR) points of validation top-1, docs/logs/rankers-comparison.md).
    report_every: a history row (validation, TensorBoard) every this many
        positions as well as after each pass (0: after each pass only).
    prior_mu, prior_sigma2: every feature's prior N(mu, sigma2) (bar, lbr).
    beta2: performance noise beta^2 (the paper's BAR: 13).
    kappa: BAR's floor epsilon of a variance's shrinking factor (Weng and Lin: 1e-4).
    ep_iters, ep_tol: LBR's message passing on one position stops after ep_iters
        iterations or once no member's mean moves by more than ep_tol of its sd.
    calibrate_positions: the softmax temperature is fitted on the validation
        set; without one, on this many training positions (evenly spaced).
    hierarchy: Stern's hierarchical model (bar, lbr): every pattern of a
        candidate's chain in its team (as features.shapes=all), each pattern's value
        drawn around its parent's with variance hierarchy_sigma2, a root's with
        prior_sigma2 (gomove.train.rankers.fit). 0.1 was the best of 0.05, 0.1 and
        0.25 for LBR at 10,000 games on the validation month (docs/logs/hierarchy.md).
    """

    name: str = "pr"
    single: bool = False
    passes: int = 1
    shuffle: bool = True
    report_every: int = 0
    prior_mu: float = 0.0
    prior_sigma2: float = 1.0
    beta2: float = 1.0
    kappa: float = 1e-4
    ep_iters: int = 20
    ep_tol: float = 1e-3
    calibrate_positions: int = 20000
    hierarchy: bool = False
    hierarchy_sigma2: float = 0.1

    def validate(self) -> None:
        if self.name not in RANKERS:
            raise ValueError(f"name must be one of {RANKERS}, not {self.name!r}")
        if self.passes < 1 or self.report_every < 0 or self.calibrate_positions < 1:
            raise ValueError("passes and calibrate_positions must be >= 1, report_every >= 0")
        if not (self.prior_sigma2 > 0 and self.beta2 > 0 and 0 < self.kappa <= 1):
            raise ValueError("prior_sigma2 and beta2 must be > 0 and kappa in (0, 1]")
        if self.ep_iters < 1 or self.ep_tol < 0:
            raise ValueError("ep_iters must be >= 1 and ep_tol >= 0")
        if self.hierarchy and (self.name == "pr" or not self.hierarchy_sigma2 > 0):
            raise ValueError("model.hierarchy: bar or lbr, with hierarchy_sigma2 > 0")


TERRITORY_METHODS = ("ml", "pl", "independent")
CHAINS = ("persistent", "labels")


@dataclass
class TerritoryConfig(ModelConfig):
    """``model=territory``: Stern's territory CRF (gomove.train.territory), trained on the
    labelled games of data.train (those that ended by counting) and measured on those
    of data.test. What the CRF learns and how (gomove.train.territory.fit). The defaults are the
    recipe of the shipped model, chosen on the validation month (docs/territory.md):
    the rmc16 features (16 rule playouts a position beside the static reading), fields
    only, by their exact likelihood. The joint models (ml, pl) measure worse on each
    point's owner: longer pseudo-likelihood training, or faster ML, overfits
    the couplings and the model magnetizes (whole regions flip together and the
    scores go wild); their best recipe was a few steps of pseudo-likelihood, then
    persistent ML at lr 0.005 (``model.method=ml model.features=wide``).

    features: the CRF's feature set: "stern", "rich", "wide", "mc8", "mc16", "mc32"
        (uniform playouts), or "pmc4", "pmc6", "pmc8", "pmc12" (pattern-policy
        playouts), "rmc8", "rmc12", "rmc16" (rule playouts, gomove.playout.rule)
        (gomove.models.territory.features); the ``features`` group of move models
        plays no part.
    policy: the pmc features' playout policy, a policy.npz (null: the shipped light
        policy); the model keeps a copy of its gammas.
    method: "ml", maximum likelihood, the model's statistics estimated by
        ``sweeps`` Swendsen-Wang sweeps a step on one persistent chain per
        training position; "pl", pseudo-likelihood (exact gradient, no sampling); or
        "independent", the couplings held at zero, so that the likelihood is exact
        (logistic regression on the fields) and a query needs no sampling.
    pl_epochs: ml starts from this many pseudo-likelihood epochs (a cheap warm start).
    epochs, batch_size (positions a step), lr (Adam), l2 (weight of the squared
        parameters in the mean loss).
    every: keep every n-th position of each labelled game for training (neighbouring
        positions differ by a stone and share their labels).
    chains: "persistent", each training position's chain continues where its last
        visit left it (persistent contrastive divergence), or "labels", every step
        starts the chains at the positions' labels (contrastive divergence, CD-sweeps:
        biased, but it keeps the model near the data when the persistent chains lag).
    engine: where ml's sweeps run: "auto" (compiled on the CPU, torch on another
        device), "numba" (CPU only) or "torch" (any device: the CUDA path, checkable
        on the CPU).
    eval_sweeps: Swendsen-Wang sweeps a test position is estimated with.
    max_eval_positions: test positions of the per-epoch check (TensorBoard).
    judge_playouts: the dead strings' judge (gomove.models.territory.judge), fitted
        after the CRF on the last positions of the training games, reads this many
        uniform playouts (0: no judge; counting then judges a string by the CRF's
        mean map). On the validation month (its 285 labelled games) 256 judged best:
        within 2 points of the count in 94.4% of the games from their last position,
        against 93.7% (64, 128), 89.8% (32), 84.2% (16), 80.4% without a judge.
    """

    name: str = "territory"
    features: str = "rmc16"
    policy: str | None = None
    method: str = "independent"
    pl_epochs: int = 2
    epochs: int = 3
    batch_size: int = 256
    lr: float = 0.02
    l2: float = 1e-4
    sweeps: int = 5
    chains: str = "persistent"
    engine: str = "auto"
    every: int = 16
    eval_sweeps: int = 100
    max_eval_positions: int = 300
    judge_playouts: int = 256

    def validate(self) -> None:
        if self.method not in TERRITORY_METHODS:
            raise ValueError(
                f"model.method must be one of {TERRITORY_METHODS}, not {self.method!r}"
            )
        if (
            min(self.epochs, self.batch_size, self.every, self.eval_sweeps) < 1
            or self.pl_epochs < 0
        ):
            raise ValueError("territory: epochs, batch_size, every and eval_sweeps must be >= 1")
        if self.chains not in CHAINS:
            raise ValueError(f"model.chains must be one of {CHAINS}, not {self.chains!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"model.engine must be one of {ENGINES}, not {self.engine!r}")
        if self.judge_playouts < 0:
            raise ValueError("model.judge_playouts must be >= 0 (0: no judge)")
        if self.method == "ml" and self.sweeps < 1:
            raise ValueError("model.sweeps must be >= 1 for method=ml")


@dataclass
class BalanceConfig(ModelConfig):
    """``model=balance``: simulation balancing of a playout policy on labelled positions
    (gomove.train.balance; Huang, Coulom and Lin 2010).

    labels: the labelled positions (a labels.jsonl of ``gomove balance label``).
    policy: the policy.npz to start from (null: the shipped light policy).
    val: the share of the labelled games held out (by a hash of each game's path),
        whose playout error is measured before and after every epoch.
    value_playouts (M) estimate V, grad_playouts (N) the gradient; lr scales
    (V* - V) x g; clip bounds one step of one log-gamma; epochs passes over the
    training positions, in a new seeded order each; eval_playouts measure the
    playouts' squared error (gomove.train.balance.fit.playout_error); komi: of
    every playout. The ``data`` and ``features`` groups play no part.
    """

    name: str = "balance"
    labels: str = MISSING
    policy: str | None = None
    val: float = 0.1
    eval_playouts: int = 256
    value_playouts: int = 64
    grad_playouts: int = 64
    lr: float = 1.0
    clip: float = 0.1
    epochs: int = 4
    komi: float = 7.5

    def validate(self) -> None:
        if self.value_playouts < 1 or self.grad_playouts < 1 or self.eval_playouts < 1:
            raise ValueError("value_playouts, grad_playouts and eval_playouts must be >= 1")
        if not 0.0 <= self.val < 1.0:
            raise ValueError(f"val is a share of the games in [0, 1), not {self.val}")
        if not (self.lr > 0 and self.clip > 0):
            raise ValueError("lr and clip must be > 0")
        if self.epochs < 0:
            raise ValueError("epochs must be >= 0")


@dataclass
class Config:
    data: DataConfig = MISSING
    features: FeatureConfig = MISSING
    # the ModelConfig of the chosen model/*.yaml (its schema: gomove.train.trainers.TRAINERS)
    model: Any = MISSING
    k: int = 10  # latent dimension of fbt / lfr (model.k reads it)
    sample: int = 0  # fbt's sampled gradient: 0 = full, else S (model.sample reads it)
    seed: int = 0
    device: str = "auto"
    progress: bool = True
    threads: int | None = None  # torch threads (None: torch's default)
    checkpoint: str | None = None  # gomove evaluate checkpoint=PATH
    resume: bool = False  # continue from the run directory's train_state.pt (mm, fbt, lfr)
    # fbt / lfr over data read in chunks: also save the train state at a chunk's end once
    # this many minutes have passed since the last save (None: after each epoch only)
    save_minutes: float | None = 10.0
