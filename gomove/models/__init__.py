"""Models: parameters and scoring of move-prediction models (no I/O, no logging)."""
