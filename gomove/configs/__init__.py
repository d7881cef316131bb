"""The Hydra configs, one folder per group, shipped in the package for the console scripts."""
