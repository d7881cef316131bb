"""Pattern-policy playouts (Coulom 2007, section 4.1): moves drawn in proportion to their gamma.

Modules, by job: ``tables`` (what a policy file becomes for the kernels),
``state`` (the incremental base gammas), ``draw`` (hot points and the exact
draw), ``check`` (the full recomputation the tests compare the state with),
``replies`` and ``tactics`` (the answers to the last move a playout plays
before it draws: learned last good replies, and captures, escapes and
decisive ataris of the strings with one or two liberties next to it),
``playout`` (the move loop, and the policy's implementation of the board's
playout driver hooks). gomove.playout.policy.PatternPolicy is the API.

Terms:
- gamma of a point for the player to move: the product of the gammas of its
  light feature levels (gomove/features/light.py: 3x3 code, capture,
  extension, self-atari, contiguity), 0 for an illegal move or one that fills
  the mover's own eye (board.scoring.is_eye). ``draw.policy_gamma`` computes
  it from ``light.levels_at`` alone: the reference the fast path must equal.
- base gamma: what the 3x3 code alone says, for both colours: the gamma the
  point would have with no previous move, no ko and no self-atari test
  (``t.base`` of its pattern3x3 level). ``s.gam[x - 1, loc]`` holds it for
  colour x, ``s.rows[x - 1, r]`` its sum over board row r (a move is drawn in
  O(size) steps), ``s.lev[loc]`` the level BLACK sees at an empty point
  (WHITE's is ``t.swap[lev]``), and ``s.alist`` the empty points next to a
  string in atari (``t.atari[lev] != 0``, an indexed set), so no string is
  walked to find the captures of the hot points.
- incremental update: a point's code changes only when a point of its 3x3
  neighbourhood changes colour (the move, the captured stones) or an
  orthogonal string's atari status changes; a string's only empty
  neighbours in atari are its one liberty. So after a move only these points
  are recomputed: the 3x3 neighbourhoods of the move and of the captured
  stones, the liberty of each string the move put in atari (its own string
  or an opponent's next to it), and the liberties of our strings in atari
  that the capture freed. A point whose level did not change is left alone;
  a changed one moves its row sums by the difference.
- hot points: the points whose gamma depends on the previous move or the ko
  (the 8 around the previous move, the liberties of the mover's strings in a
  new atari and of the opponent strings in atari next to them, the capture
  points next to the previous move's string, the ko point). Before each draw
  their full gamma v, self-atari aside (``draw.proposal_gamma``), is
  computed, the capture and extension levels by ``light.levels_at``.
- draw: exact, by a mixture and rejection, so the rows never hold the hot
  overlay. A point is proposed with weight max(v, base): from the rows
  (weight base) or from the hot list (weight v - base where v > base), and
  accepted with probability v / max(v, base) times the self-atari factor
  s / max(1, g_sa), where s is the self-atari gamma g_sa if the move is a
  self-atari (tested only for the proposed point) and 1 if not. Accepted
  moves are thus drawn in proportion to policy_gamma. After
  ``MAX_TRIES`` rejections in a row the move is drawn by a full scan of
  ``policy_gamma`` (``draw_exact``), which is exact as well.
- check: with ``PatternPlayer.check``, before every draw, every point's
  proposal weight times its acceptance is compared with ``policy_gamma``,
  both colours' base gammas with their codes, ``lev`` and ``alist`` with the
  board's codes, and the row sums (kept by differences) with fresh sums,
  the mismatches counted in ``errors[0]`` (the tests' incremental == full).

Games are seeded and end as uniform playouts do (gomove.playout.uniform: two passes in
a row or max_moves; a side with no move of positive gamma passes; superko is
not checked), scored by board.scoring.area_score.
"""
