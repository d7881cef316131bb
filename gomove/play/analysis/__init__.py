"""KataGo's JSON analysis protocol (``gomove analysis``): query.py reads and checks a
query, engine.py answers it with the search and the model, server.py is the loop."""
