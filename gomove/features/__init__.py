"""Features of candidate moves: Coulom's tactical groups, shape patterns, the registry."""
