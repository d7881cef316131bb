"""Monte-Carlo tree search on the learned patterns (Coulom 2007, section 4).

Modules: ``config`` (SearchConfig, every switch of the match table),
``tree`` (the node arrays and the progressive-widening schedule), ``kernels``
(the compiled simulation loop), ``search`` (Search: positions, budgets, tree
reuse, promotions by the full model, analysis).
"""
