"""Analysis lines in the formats GUIs parse.

- Leela Zero (``lz-analyze``, ``lz-genmove_analyze``; Lizzie, Sabaki): one line
  ``info move D4 visits 57 winrate 4821 prior 1520 lcb 4512 order 0 pv D4 Q16 ...``
  per update, every move's ``info`` block on the same line; winrate, prior and lcb
  are integers, the fraction x 10000, for the side to move.
- KataGo (``kata-analyze``): the same keys with fractions (``winrate 0.4821``,
  ``prior 0.152``) and, after the winrate, ``scoreMean``, ``scoreStdev`` and
  ``scoreLead`` (points: the search's mean final score through the move, as
  KataGo's scoreMean is its lead, and their spread), then ``ownership`` and
  size x size values in [-1, 1], row by row from the top (A19 first on 19x19);
  with ``rootInfo true``, a ``rootInfo`` block (``visits``, ``winrate``,
  ``scoreMean``, ``scoreStdev``, ``scoreLead``: the moves pooled by their visits,
  search.root_view) before the ownership; winrates, scores and ownership for the
  side to move.
- GoGui (``gfx``): ``INFLUENCE v x`` (x in [-1, 1], positive black) and
  ``LABEL v text`` lines.
"""

from __future__ import annotations

import numpy as np

from gomove.board.board import BLACK
from gomove.board.coords import GTP_COLUMNS, loc_to_gtp, top_row_first
from gomove.play.search.search import MoveInfo, root_view


def lz_info(moves: list[MoveInfo], size: int, max_moves: int = 30) -> str:
    """One lz-analyze line (empty when nothing was searched)."""
    parts = []
    for order, m in enumerate(moves[:max_moves]):
        pv = " ".join(loc_to_gtp(x, size) for x in m.pv)
        parts.append(
            f"info move {loc_to_gtp(m.loc, size)} visits {m.visits} "
            f"winrate {_int10k(m.winrate)} prior {_int10k(m.prior)} "
            f"lcb {_int10k(max(m.lcb(), 0.0))} order {order} pv {pv}"
        )
    return " ".join(parts)


def kata_info(
    moves: list[MoveInfo],
    size: int,
    ownership: np.ndarray | None,
    to_move: int,
    max_moves: int = 30,
    root_info: bool = False,
) -> str:
    """One kata-analyze line; ownership: P(black) - P(white) in sgfmill order, or None;
    root_info: with the rootInfo block (all the moves pooled, not only those shown)."""
    parts = []
    for order, m in enumerate(moves[:max_moves]):
        pv = " ".join(loc_to_gtp(x, size) for x in m.pv)
        parts.append(
            f"info move {loc_to_gtp(m.loc, size)} visits {m.visits} winrate {m.winrate:.6f} "
            f"scoreMean {m.score_mean:.6f} scoreStdev {m.score_stdev:.6f} "
            f"scoreLead {m.score_mean:.6f} "
            f"prior {m.prior:.6f} lcb {max(m.lcb(), 0.0):.6f} order {order} pv {pv}"
        )
    line = " ".join(parts)
    root = root_view(moves) if root_info and parts else None
    if root is not None:
        line += (
            f" rootInfo visits {root.visits} winrate {root.winrate:.6f} "
            f"scoreMean {root.score_mean:.6f} scoreStdev {root.score_stdev:.6f} "
            f"scoreLead {root.score_mean:.6f}"
        )
    if ownership is not None:
        sign = 1.0 if to_move == BLACK else -1.0
        line += " ownership " + " ".join(f"{x:.4f}" for x in sign * top_row_first(ownership))
    return line


def _int10k(x: float) -> int:
    return int(round(10000 * min(max(x, 0.0), 1.0)))


def point_vertex(r: int, c: int) -> str:
    """GTP vertex of sgfmill (row, col)."""
    return f"{GTP_COLUMNS[c]}{r + 1}"


def gfx_influence(values: np.ndarray, labels: dict[tuple[int, int], str] | None = None) -> str:
    """GoGui gfx: INFLUENCE for every point with a nonzero value (sgfmill [row, col] order,
    clipped to [-1, 1]) and LABEL lines."""
    size = values.shape[0]
    pts = [
        f"{point_vertex(r, c)} {np.clip(values[r, c], -1, 1):.3f}"
        for r in range(size)
        for c in range(size)
        if np.isfinite(values[r, c]) and values[r, c] != 0
    ]
    lines = []
    if pts:
        lines.append("INFLUENCE " + " ".join(pts))
    if labels:
        lines.append(
            "LABEL " + " ".join(f"{point_vertex(r, c)} {t}" for (r, c), t in labels.items())
        )
    return "\n".join(lines)
