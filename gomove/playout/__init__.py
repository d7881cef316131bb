"""Playouts: random games to the end, every policy in one place.

Where to start reading: ``driver`` (the one playout driver: games of any policy from a
position, their scores and owners), ``hooks`` (the interface a policy implements),
then the policies: ``uniform`` (and the settle policy), ``rule`` (MoGo-like rules, the
territory CRF's) and ``pattern/`` (the compiled pattern playouts of a learned light
policy), with ``policy`` (PatternPolicy: a policy file with its kernel tables, the API
the search and GTP use). ``rng`` is the random numbers of compiled code. The rules
they ask the board (eyes, area scoring, the move limit) are gomove.board.scoring's.
"""
