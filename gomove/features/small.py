"""Stern's small feature vector: non-shape properties of a move, as 8 bits.

Stern, Herbrich and Graepel (2006) represent a move by its largest matched
shape with a small vector of binary non-shape properties folded in; Wistuba
et al. (2012, Fig. 9) add that vector to shape patterns of sizes 2 to 4, where
prediction was worst. Here it is one more feature group, ``small``, present on
candidates whose largest matched shape is small (radius <= small_max_radius,
or none matched) and absent elsewhere, so every ranker can weigh it (a team
member, not a product with the shape: the pattern tables stay as harvested).

Bits of ``small_vector`` (our reading of Stern et al.'s table of properties):
- 0-1: liberties of the move's new string, 1, 2, 3, 4 or more;
- 2-3: the least liberties of an adjacent opponent string before the move:
  none adjacent, 1 (in atari), 2, 3 or more;
- 4: a simple ko is on the board;
- 5: the move saves an own string in atari (joins it and leaves more than one
  liberty);
- 6-7: distance to the edge, 0 (first line), 1, 2, 3 or more.
Level = vector + 1 (0: absent, and pass).
"""

from __future__ import annotations

from numba import njit

from gomove.board.board import KO, W, adjacent_strings, libs_after

N_SMALL = 256
LIB_NAMES = ("1", "2", "3", "4+")
OPP_NAMES = ("-", "1", "2", "3+")
EDGE_NAMES = ("0", "1", "2", "3+")


@njit(cache=True)
def small_vector(b, loc: int, color: int) -> int:
    """The 8-bit vector of the module docstring for a legal move at loc (not pass)."""
    libs = libs_after(b, loc, color)
    lib_bits = min(max(libs, 1), 4) - 1
    least = 0
    for h in adjacent_strings(b, loc, 3 - color):
        if h != -1 and (least == 0 or b.libs[h] < least):
            least = b.libs[h]
    opp_bits = min(least, 3)
    ko = 1 if b.info[KO] >= 0 else 0
    escape = 0
    if libs > 1:
        for h in adjacent_strings(b, loc, color):
            if h != -1 and b.libs[h] == 1:
                escape = 1
    w = b.info[W]
    size = w - 2
    row = loc // w - 1
    col = loc % w - 1
    edge = min(min(row, col), min(size - 1 - row, size - 1 - col), 3)
    return lib_bits | (opp_bits << 2) | (ko << 4) | (escape << 5) | (edge << 6)


def level_names() -> tuple[str, ...]:
    """Readable names of levels 1..256 (vector 0..255)."""
    out = []
    for v in range(N_SMALL):
        parts = [f"libs{LIB_NAMES[v & 3]}", f"opp{OPP_NAMES[(v >> 2) & 3]}"]
        parts += ["ko"] if v >> 4 & 1 else []
        parts += ["escape"] if v >> 5 & 1 else []
        parts.append(f"edge{EDGE_NAMES[v >> 6]}")
        out.append("/".join(parts))
    return tuple(out)
