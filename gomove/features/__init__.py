"""Features of candidate moves: what a candidate's team of levels is made of.

Where to start reading: ``config`` (FeatureConfig, the features group), ``registry``
(groups and their levels as global feature indices, offsets computed), then the groups:
``levels`` (the capture and extension levels the full and light features share),
``tactical`` (Coulom's Table 1, ladders), ``light`` (the playout policy's light
features, 3x3 codes), ``patterns`` (nested templates, symmetry-invariant Zobrist
hashes) and ``pattern_table`` (the harvested shapes), ``hierarchy`` (every pattern of
a candidate's chain), ``mc_owner`` (the Monte-Carlo owner's levels), ``small``
(Stern's small vector), ``light_gammas`` (a policy file). Extracting them from games
is gomove.data's.
"""
