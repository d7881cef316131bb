"""Monte-Carlo tree search on the learned patterns (Coulom 2007, section 4).

Where to start reading: ``search`` (Search: positions, budgets, tree reuse, promotions
by the full model, analysis), ``settings`` (SearchConfig, every switch of the match
table), ``presets`` (the engines' settings for each board size, the trees), ``tree``
(the node arrays and the progressive-widening schedule), ``kernels`` (the compiled
simulation loop).
"""
