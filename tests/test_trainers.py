"""The trainer table (gomove.train.trainers.TRAINERS): one row per trainer name.

Invariants checked:
- the table and gomove/configs/model/*.yaml name the same trainers, and every
  row's config group composes through Hydra into its schema (a typo fails);
- every move model trains a tiny model through the table (train_data_of, fit) on the
  flat layout and on padded batches, and its checkpoint round-trips: the
  model rebuilt by load_checkpoint is of its class (MODEL_CLASSES), with bitwise the
  same parameters, hyperparameters and scores;
- ``model=<name>`` runs end to end through the table for every move model (the
  territory CRF and simulation balancing: tests/test_territory_run.py,
  tests/test_balance.py);
- an unknown model name fails clearly, listing the known ones: in the table,
  in a config, in a checkpoint;
- which engine model.engine picks on each device, and what the model interface
  says (gamma-table columns, gammas for a playout policy).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hydra.errors import ConfigCompositionException
from synthetic import CONFIGS, cfg_of, tiny_overrides

from gomove.data.flat import FlatData
from gomove.data.loader import BatchLoader
from gomove.models.checkpoint import (
    load_checkpoint,
    model_class,
    save_checkpoint,
    write_gamma_table,
)
from gomove.models.fbt import FactorizationBT
from gomove.models.mm import BradleyTerry
from gomove.train.context import TrainContext
from gomove.train.move_models import train_data_of
from gomove.train.schemas import compiled_engine
from gomove.train.trainers import MOVE_MODELS, TRAINERS, model_config, run, trainer_of

CPU = torch.device("cpu")
# a tiny run of each model: 2 iterations / epochs
SMALL = {
    "mm": ["model.max_iters=2", "model.tol=0"],
    "fbt": ["k=3", "model.epochs=2"],
    "lfr": ["k=2", "model.epochs=2"],
    "pr": [],
    "bar": ["model.passes=2"],
    "lbr": ["model.passes=2", "model.ep_iters=5"],
}
ROWS = {"pr": 2}  # history rows of a SMALL run: the start and 2 iterations, PR's one count


def test_table_matches_the_config_group():
    """Every row has its yaml, every model yaml has its row."""
    yamls = {p.stem for p in (Path(CONFIGS) / "model").glob("*.yaml")}
    assert yamls == set(TRAINERS)
    assert set(SMALL) == set(MOVE_MODELS)  # this test module knows every move model
    assert set(TRAINERS) - set(MOVE_MODELS) == {"territory", "balance"}


@pytest.mark.parametrize("name", list(TRAINERS))
def test_config_composes_into_the_schema(name):
    """``model=<name>`` composes; model_config gives the row's schema, checked (balance
    once its labels are given); a misspelt key fails at composition."""
    cfg = cfg_of([f"model={name}", "seed=3", *(["model.labels=x"] if name == "balance" else [])])
    assert cfg.model.name == name
    model_cfg = model_config(cfg)
    assert type(model_cfg) is trainer_of(name).config
    assert model_cfg.name == name and model_cfg.seed == 3
    assert getattr(model_cfg, "flat", True)
    with pytest.raises(ConfigCompositionException, match="no_such_key"):
        cfg_of([f"model={name}", "model.no_such_key=1"])


@pytest.mark.parametrize("flat", [True, False])
@pytest.mark.parametrize("name", MOVE_MODELS)
def test_fit_through_the_table_and_round_trip(extracted, tmp_path, name, flat):
    """train_data_of + the row's fit train a tiny model (flat layout or padded batches);
    save_checkpoint -> load_checkpoint rebuilds it exactly (class, parameters,
    hparams, scores) and writes the same gamma table."""
    ds, ex = extracted
    trainer = trainer_of(name)
    cfg = cfg_of([f"model={name}", f"model.flat={str(flat).lower()}", *SMALL[name]])
    model_cfg = model_config(cfg)
    data = train_data_of(model_cfg, ds, batch_size=32)
    assert isinstance(data, FlatData if flat else BatchLoader)
    model, history = trainer.fit(model_cfg, data, TrainContext.of(ds.registry, CPU, progress=False))
    assert isinstance(model, model_class(name)) and len(history) == ROWS.get(name, 3)
    path = tmp_path / "model.pt"
    save_checkpoint(path, model, ex, cfg, history)
    state = load_checkpoint(path)
    module = state["module"]
    assert type(module) is model_class(name) and state["model_name"] == name
    assert state["model_args"] == module.hparams() == model.hparams()
    saved, again = model.state_dict(), module.state_dict()
    assert saved.keys() == again.keys()
    assert all(torch.equal(saved[k], again[k]) for k in saved)
    batch = next(iter(BatchLoader(ds, batch_size=16)))
    with torch.no_grad():
        torch.testing.assert_close(
            module.log_probs(batch.feat, batch.mask),
            model.log_probs(batch.feat, batch.mask),
            rtol=0,
            atol=0,
        )
    write_gamma_table(tmp_path / "a.md", model, ds.registry)
    write_gamma_table(tmp_path / "b.md", module, ds.registry)
    assert (tmp_path / "a.md").read_text() == (tmp_path / "b.md").read_text()


@pytest.mark.parametrize("name", MOVE_MODELS)
def test_run_every_model(games, tmp_path, name):
    """``train.py model=<name>`` trains and evaluates through the table."""
    cfg = cfg_of([*tiny_overrides(games, tmp_path), f"model={name}", *SMALL[name]])
    metrics = run(cfg, tmp_path / "run")
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["model"] == saved["model"] == name
    assert load_checkpoint(tmp_path / "run" / "model.pt")["model_name"] == name


def test_unknown_model_fails_clearly(extracted, tmp_path):
    """The table, a config and a checkpoint naming an unknown model all fail with a
    message naming the known ones."""
    known = "known models: mm, fbt, lfr, pr, bar, lbr, territory, balance"
    with pytest.raises(ValueError, match=f"unknown model 'nope'; {known}"):
        trainer_of("nope")
    with pytest.raises(ValueError, match=known):
        model_config(cfg_of(["model.name=nope"]))
    with pytest.raises(ValueError, match=known):
        run(cfg_of(["model.name=nope", f"data.cache_dir={tmp_path}"]), tmp_path / "run")
    with pytest.raises(ConfigCompositionException, match="(?s)model/nope.*fbt.*lfr.*mm"):
        cfg_of(["model=nope"])
    ds, ex = extracted
    path = tmp_path / "m.pt"
    save_checkpoint(path, BradleyTerry(ds.registry.n_features), ex, {"model": {"name": "nope"}})
    with pytest.raises(ValueError, match="known models: mm, fbt, lfr, pr, bar, lbr$"):
        load_checkpoint(path)  # the classes a model.pt can hold


def test_engines_and_interface():
    """model.engine picks numba on the CPU and torch elsewhere ("auto"), numba only on
    the CPU. The models say what their gamma tables and playout policies need."""
    cuda = torch.device("cuda")
    assert compiled_engine("auto", CPU, "e") and not compiled_engine("auto", cuda, "e")
    assert not compiled_engine("torch", CPU, "e") and compiled_engine("numba", CPU, "e")
    with pytest.raises(ValueError, match="CPU only"):
        compiled_engine("numba", cuda, "model.engine")
    with pytest.raises(ValueError, match="must be one of"):
        model_config(cfg_of(["model=fbt", "model.engine=cuda"]))
    bt = BradleyTerry(5, torch.tensor([0.0, 1.0, -1.0, 0.5, 2.0], dtype=torch.float64))
    assert bt.hparams() == {} and bt.level_notes() == {}
    assert torch.equal(bt.log_gammas(), bt.log_gamma)
    assert torch.equal(bt.level_strength(), bt.log_gamma)
    fbt = FactorizationBT(5, 3, init_std=0.5, generator=torch.Generator().manual_seed(0))
    assert fbt.hparams() == {"k": 3} and fbt.log_gammas() is None
    assert torch.equal(fbt.level_notes()["|v|"], fbt.v.detach().double().norm(dim=1))
