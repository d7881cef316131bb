"""Datasets: cached feature extraction, the compact flat layout every engine reads.

Where to start reading: ``dataset`` (harvest and extraction, cached and parallel),
``store`` (the dataset's files: the flat layout on disk, checksummed, resumable),
``flat`` (FlatData: every candidate's
levels bit-packed, memory-mapped; ``fields`` its readers in numba), ``loader`` and
``batch`` (padded batches), ``sources`` (what a data config names), ``labels``
(labelled positions).
"""
