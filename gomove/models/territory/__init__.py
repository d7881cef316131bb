"""Stern's territory predictor: a CRF over the final owner of every point
(crf: the model and its queries; features: what it sees of a position; sampler and
batched: Swendsen-Wang sampling, compiled for play and in torch for training)."""
