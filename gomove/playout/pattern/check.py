"""check_gammas: the incremental state against a full recomputation, before a draw (see __init__).

The playouts run it when ``PatternPlayer.check`` is set (the tests do), and
count its mismatches in ``PatternPlayer.errors``.
"""

from __future__ import annotations

from numba import njit

from gomove.board.board import BLACK, EMPTY, SIZE, Board, W
from gomove.board.coords import NO_MOVE
from gomove.features.light import light_code
from gomove.playout.pattern.draw import acceptance, policy_gamma, proposal_gamma, self_atari_scale
from gomove.playout.pattern.state import PatternState
from gomove.playout.pattern.tables import PolicyTables


@njit(cache=True)
def check_gammas(
    b: Board,
    color: int,
    last: int,
    ko: int,
    t: PolicyTables,
    s: PatternState,
    nh: int,
    hot_total: float,
) -> int:
    """Mismatches of the incremental state against a full recomputation (before a draw;
    the hot points are those marked with the current generation s.gen[0]).

    Counts one per point whose proposal weight times acceptance is not its
    policy_gamma, whose base gamma (either colour) is not proposal_gamma's,
    whose level or place in alist is wrong; one per wrong row sum (either
    colour), for a wrong alist length and for a wrong sum of the hot extras.
    """
    size = b.info[SIZE]
    w = b.info[W]
    gen = s.gen[0]
    ci = color - 1
    sa_max, sa_yes, sa_no = self_atari_scale(t)
    bad = 0
    listed = 0
    for r in range(size):
        fresh0 = 0.0
        fresh1 = 0.0
        for c in range(size):
            p = (r + 1) * w + c + 1
            g = s.gam[ci, p]
            weight = max(s.hotval[p], g) if s.mark[p] == gen else g
            eff = 0.0
            if weight > 0.0:
                eff = weight * sa_max * acceptance(b, p, color, gen, s, t, sa_yes, sa_no)
            want = policy_gamma(b, p, color, last, ko, t)
            if abs(eff - want) > 1e-12 * want:
                bad += 1
            for x in range(2):
                if s.gam[x, p] != proposal_gamma(b, p, x + 1, NO_MOVE, -1, t):
                    bad += 1
            fresh0 += s.gam[0, p]
            fresh1 += s.gam[1, p]
            if b.color[p] == EMPTY and s.lev[p] != t.level[light_code(b, p, BLACK)]:
                bad += 1
            if (s.apos[p] >= 0) != (b.color[p] == EMPTY and t.atari[s.lev[p]] != 0):
                bad += 1
            elif s.apos[p] >= 0:
                listed += 1
                if s.alist[s.apos[p]] != p:
                    bad += 1
        for x, fresh in ((0, fresh0), (1, fresh1)):
            if abs(s.rows[x, r] - fresh) > 1e-9 * max(fresh, 1e-3):
                bad += 1
    if listed != s.acount[0]:
        bad += 1
    extra = 0.0
    for i in range(nh):
        p = s.pts[i]
        extra += max(s.hotval[p] - s.gam[ci, p], 0.0)
    if abs(extra - hot_total) > 1e-12 * max(extra, 1.0):
        bad += 1
    return bad
