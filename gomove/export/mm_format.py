"""Coulom's ``mm`` program's files: the competition file it reads, the gammas it writes.

Terms (``mm.cpp``, Coulom 2007; it ships in Pachi's ``pattern/training/mm/``):
- competition file: ``! N`` (the number of gammas), the number of features,
  one ``<n> <name>`` line per feature (its gammas are the next n indices), ``!``;
  then per position a ``#`` line, the winner's team and every participant's
  team, one a line, the winner's included.
- team: the 0-based gamma indices of a candidate, at most one per feature,
  separated by spaces (an empty line for a candidate of no feature).
- mm index: gomove's global index minus 1: gomove's index 0, the shared
  ``none``, has no gamma in ``mm`` and is never written (registry.py).
- gammas file: what ``mm`` prints, one ``<index> <gamma>`` line per gamma in
  index order (``mm-with-freq.dat`` adds victories, participations and
  presences after the gamma; they are ignored).

Groups without levels are left out of the feature list (they own no index).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import BinaryIO

import numpy as np
from numba import njit

from gomove.atomic import atomic_write, atomic_write_text
from gomove.data.flat import FlatData
from gomove.features.registry import Registry

CHUNK_POSITIONS = 4096  # positions formatted per buffer


def header(reg: Registry) -> str:
    """The competition file's header: ``! N``, the features, ``!``."""
    groups = [(g.name, len(g)) for g in reg.groups if len(g)]
    lines = [f"! {reg.n_features - 1}", str(len(groups))]
    lines += [f"{n} {name}" for name, n in groups]
    return "\n".join(lines + ["!"]) + "\n"


@njit(cache=True)
def _put_int(buf: np.ndarray, n: int, v: int) -> int:
    """Write the decimal digits of v >= 0 at buf[n:]; return the new end."""
    if v == 0:
        buf[n] = 48
        return n + 1
    k = 0
    x = v
    while x > 0:
        k += 1
        x //= 10
    for j in range(k - 1, -1, -1):
        buf[n + j] = 48 + v % 10
        v //= 10
    return n + k


@njit(cache=True)
def _put_team(idx: np.ndarray, c: int, buf: np.ndarray, n: int) -> int:
    first = True
    for g in range(idx.shape[1]):
        v = idx[c, g]
        if v < 0:
            continue
        if not first:
            buf[n] = 32
            n += 1
        n = _put_int(buf, n, v)
        first = False
    buf[n] = 10
    return n + 1


@njit(cache=True)
def _format_positions(
    idx: np.ndarray, pos_start: np.ndarray, winner: np.ndarray, base: int, buf: np.ndarray
) -> int:
    """Positions whose candidates are rows pos_start[p] - base of idx[C, G] (mm indices,
    -1: absent) as competition-file text in buf; returns the byte count."""
    n = 0
    for p in range(pos_start.shape[0] - 1):
        buf[n] = 35  # '#'
        buf[n + 1] = 10
        n += 2
        lo = pos_start[p] - base
        n = _put_team(idx, lo + winner[p], buf, n)
        for c in range(lo, pos_start[p + 1] - base):
            n = _put_team(idx, c, buf, n)
    return n


def mm_indices(data: FlatData, lo: int, hi: int) -> np.ndarray:
    """int64[hi - lo, G]: the mm index of candidates lo:hi in each group (-1: absent)."""
    out = np.full((hi - lo, len(data.sizes)), -1, dtype=np.int64)
    for g, off in enumerate(data.offsets):
        lev = data.level(g, slice(lo, hi)).astype(np.int64)
        out[:, g] = np.where(lev > 0, off + lev - 2, -1)
    return out


def write_positions(f: BinaryIO, data: FlatData, chunk_positions: int = CHUNK_POSITIONS) -> None:
    """Every position of data as ``#``, winner, participants (module docstring)."""
    digits = len(str(max(data.min_features, 2)))
    per_cand = len(data.sizes) * (digits + 1) + 1
    for p0 in range(0, data.n_positions, chunk_positions):
        p1 = min(p0 + chunk_positions, data.n_positions)
        starts = data.pos_start[p0 : p1 + 1]
        lo, hi = int(starts[0]), int(starts[-1])
        idx = mm_indices(data, lo, hi)
        buf = np.empty((hi - lo + 2 * (p1 - p0)) * per_cand + 2 * (p1 - p0), dtype=np.uint8)
        n = _format_positions(idx, starts, data.winner[p0:p1], lo, buf)
        f.write(buf[:n].tobytes())


def write_competition(path: str | Path, data: FlatData, reg: Registry) -> None:
    """data (its registry reg) as the file ``mm`` reads, written atomically."""
    if data.offsets != [int(o) for o in reg.offsets] or data.sizes != [int(s) for s in reg.sizes]:
        raise ValueError("the data's groups are not the registry's")

    def write(f: BinaryIO) -> None:
        f.write(header(reg).encode())
        write_positions(f, data)

    atomic_write(path, write)


def read_gammas(path: str | Path, n_gammas: int | None = None) -> np.ndarray:
    """float64[N]: the gammas of an ``mm`` output file, by index; a clear ValueError
    (file and line) on anything else, or when n_gammas is given and differs."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read the gammas ({e})") from None
    gammas: list[float] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        where = f"{path}:{lineno}"
        if len(fields) < 2:
            raise ValueError(f"{where}: want '<index> <gamma>', got {line.strip()!r}")
        try:
            index, gamma = int(fields[0]), float(fields[1])
        except ValueError:
            raise ValueError(f"{where}: want '<index> <gamma>', got {line.strip()!r}") from None
        if index != len(gammas):
            raise ValueError(f"{where}: gamma index {index}, expected {len(gammas)}")
        if not (math.isfinite(gamma) and gamma > 0):
            raise ValueError(f"{where}: gamma {fields[1]} is not a positive number")
        gammas.append(gamma)
    if not gammas:
        raise ValueError(f"{path}: no gammas")
    if n_gammas is not None and len(gammas) != n_gammas:
        raise ValueError(
            f"{path}: {len(gammas)} gammas, but the registry has {n_gammas} "
            "(was it written for another dataset?)"
        )
    return np.array(gammas, dtype=np.float64)


def write_gammas(path: str | Path, log_gamma: np.ndarray) -> None:
    """A model's gammas as ``mm`` prints them (index, gamma), every digit kept;
    log_gamma[F] is gomove's, index 0 (``none``) left out."""
    lg = np.asarray(log_gamma, dtype=np.float64)
    lines = [f"{i:3d} {math.exp(v)!r}" for i, v in enumerate(lg[1:])]
    atomic_write_text(path, "\n".join(lines) + "\n")


def log_gammas_of(gammas: np.ndarray) -> np.ndarray:
    """gomove's log_gamma[F] from ``mm``'s gammas[F - 1] (index 0, none, gets 0)."""
    return np.concatenate([[0.0], np.log(gammas)])
