"""The Go board and what it answers: the rules, in numba.

Where to start reading: ``coords`` (the four ways a point is named, one table),
``board`` (the Board arrays, strings, liberties, legality, play), ``scoring`` (eyes,
area scoring, dead stones by a map, the move limit: how a game ends), ``replay``
(the one replay driver and its visitors), ``zobrist`` (hash keys), ``distance``
(the common-fate-graph distance).
"""
