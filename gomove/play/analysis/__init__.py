"""KataGo's JSON analysis protocol (``gomove analysis``).

Where to start reading: ``engine`` (a query answered with the search and the model),
``query`` (a query read and checked), ``pool`` (turns analysed in parallel, one worker
process a core), ``server`` (the loop).
"""
