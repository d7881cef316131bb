"""Data: games turned into per-candidate feature levels, cached, in the compact flat
layout every engine reads.

Where to start reading: ``dataset`` (harvest and extraction, cached, parallel,
resumable), ``extractor`` (FeatureExtractor: a game or a position -> levels, and the
registry) over ``visitor`` (the compiled replay visitor that fills every enabled group,
the Monte-Carlo owner's playouts included) and ``harvest`` (counting the shape
patterns of the training games); ``store`` (the dataset's files on disk, checksummed),
``flat`` (FlatData: every candidate's levels bit-packed, memory-mapped; ``fields`` its
readers in numba; ``device_flat`` the same on a torch device), ``loader`` and ``batch``
(padded batches), ``sources`` (what a data config names). Labelled positions apart
from move prediction: ``territory_labels`` (the final territory of counted games) and
``value_labels`` (positions with a win rate, for simulation balancing).
"""
