"""gomove: fast move-prediction models for Go learned from expert game records."""

__version__ = "0.1.0"
