"""The models shipped inside the package (docs/model-card.md says how they were made).

- ``MODEL``: the full move-prediction model, a packed checkpoint
  (gomove.models.packed): the prior, the policy mode and progressive widening;
- ``POLICY``: the light playout policy (a ``policy.npz`` of ``train.py
  features=light``): the search's pattern playouts and the ownership maps;
- ``TERRITORY``: Stern's territory CRF (gomove.models.territory.crf, a ``crf.pt``
  of ``gomove territory train``): ownership maps, and its string judge's dead stones.

Data only: the loaders (``Predictor.default``, ``PatternPolicy.default``) live
with the code that reads each kind.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = HERE / "model.npz"
POLICY = HERE / "policy.npz"
TERRITORY = HERE / "territory.pt"
CARD = "docs/model-card.md"


def describe(model_name: str, source: dict) -> str:
    """How messages name the shipped model: its kind and the packer's note on its data."""
    note = source.get("note") or f"trained on {', '.join(source.get('train', []))}"
    return f"the shipped {model_name} model ({note}; {CARD})"


def missing(path: Path) -> str:
    """The error for a shipped file that is not there (a checkout without it)."""
    return f"no shipped model at {path} (this gomove was built without it): give a model file"
