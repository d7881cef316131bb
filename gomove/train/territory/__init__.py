"""Training Stern's territory CRF (gomove.models.territory): ``gomove train model=territory``.

Where to start reading: ``run`` (the run: labelled games -> positions -> fit -> judge ->
crf.pt -> measures), ``fit`` (the fields' exact likelihood, maximum likelihood with
the model's statistics from persistent Swendsen-Wang chains, or pseudo-likelihood),
``judge`` (the dead strings' logistic regression).
"""
