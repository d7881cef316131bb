"""Training loops, devices and metrics logging for the move-prediction models."""
