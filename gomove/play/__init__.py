"""Playing Go: random playouts (and later search and GTP) over the numba board."""
