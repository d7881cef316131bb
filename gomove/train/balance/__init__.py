"""Simulation balancing of a playout policy (Silver and Tesauro 2009; Huang, Coulom
and Lin 2010).

``fit`` moves the playout gammas so that the playouts' mean outcome matches each
labelled position's value (labels: gomove.data.labels, written by
gomove.play.labels); ``gradient`` is a playout's score function (REINFORCE).
"""
