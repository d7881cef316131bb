"""Command-line entry points: thin wrappers over the library (see README, Modules)."""
