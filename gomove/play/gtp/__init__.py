"""The GTP engine: ``protocol`` (commands in, responses out, GTP 2 draft), ``analysis``
(the lines GUIs read: Leela Zero's lz-analyze, KataGo's kata-analyze, GoGui's gfx) and
``engine`` (the commands on a GameState, the search and the model)."""
