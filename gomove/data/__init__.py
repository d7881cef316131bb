"""Datasets: reading games, extracting feature shards, loading padded batches."""
