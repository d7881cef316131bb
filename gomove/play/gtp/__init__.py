"""The GTP engine (``gomove gtp``).

Where to start reading: ``engine`` (the commands on a game, the search and the model),
``protocol`` (commands in, responses out, GTP 2 draft), ``info_lines`` (the analysis
lines GUIs read: Leela Zero's lz-analyze, KataGo's kata-analyze, GoGui's gfx),
``server`` (the loop).
"""
