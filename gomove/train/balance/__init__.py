"""Simulation balancing of a playout policy (Silver and Tesauro 2009; Huang, Coulom
and Lin 2010): ``gomove train model=balance``.

Where to start reading: ``run`` (the run: the labels split by game, the epochs, the
error before and after), ``fit`` (``balance``: the playout gammas moved so that the
playouts' mean outcome matches each labelled position's value; labels:
gomove.data.value_labels, written by gomove.play.labelling), ``gradient`` (a playout's
score function, REINFORCE, compiled).
"""
