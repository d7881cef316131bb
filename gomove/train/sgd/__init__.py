"""FBT and LFR by stochastic gradient descent (Xiao and Müller 2016; Wistuba and
Schmidt-Thieme 2013).

Where to start reading: ``loop`` (``train_sgd``: epochs, schedules, init, validation,
keeping the best epoch), ``losses`` (the three losses and the team strength's compiled
backward), then the engines side by side: ``compiled`` (numba steps over the flat
layout on the CPU, kernels in ``kernels``) and ``tensor`` (its torch twin, any device),
which share ``flat_sgd`` (the checks, the batch size, the epoch order, the state a
resumed run continues from), and ``padded`` (torch.optim over padded batches, any
device: the oracle); ``distributed`` spreads a global batch over torchrun's ranks.
"""
