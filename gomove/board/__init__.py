"""The Go board: coordinates, Zobrist keys and the numba rule kernels."""
