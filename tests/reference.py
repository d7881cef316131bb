"""Slow, obviously-correct pure-Python oracles that the fast code is tested against.

A flat module of functions; each says what it recomputes from scratch.

Board oracles take ``color``, the padded colour array of a Board (any
sequence indexed by loc, see gomove/board/coords.py) and the board size, and
never read the Board's incremental state (heads, liberty counts, hashes).
Terms: ``player`` is the colour to play a move; ``ko`` is the simple-ko point
the player may not fill (-1 for none).
"""

from __future__ import annotations

import math

from gomove.board.board import BLACK, EMPTY, WHITE
from gomove.board.coords import from_loc, to_loc
from gomove.board.zobrist import POSITION_KEYS

# --- board -------------------------------------------------------------------


def board_points(size: int) -> list[int]:
    """Every on-board loc, row by row from the bottom."""
    return [to_loc(r, c, size) for r in range(size) for c in range(size)]


def adjacent(loc: int, size: int) -> list[int]:
    """The on-board points next to loc (2 in a corner, 3 on an edge, else 4)."""
    r, c = from_loc(loc, size)
    steps = ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
    return [to_loc(rr, cc, size) for rr, cc in steps if 0 <= rr < size and 0 <= cc < size]


def region_at(color, loc: int, size: int) -> frozenset[int]:
    """The points joined to loc through points of loc's colour (stones or empty), by
    flood fill."""
    c = color[loc]
    seen = {loc}
    todo = [loc]
    while todo:
        s = todo.pop()
        for nb in adjacent(s, size):
            if color[nb] == c and nb not in seen:
                seen.add(nb)
                todo.append(nb)
    return frozenset(seen)


def string_at(color, loc: int, size: int) -> frozenset[int]:
    """The stones of the string through the stone at loc."""
    assert color[loc] in (BLACK, WHITE), f"no stone at {loc}"
    return region_at(color, loc, size)


def cfg_distance(color, loc: int, size: int) -> dict[int, int]:
    """Every point's distance from loc on the common fate graph, by breadth-first search
    over its vertices: a string of stones is one vertex, an empty point another."""

    def vertex(p: int) -> frozenset[int]:
        return string_at(color, p, size) if color[p] in (BLACK, WHITE) else frozenset([p])

    start = vertex(loc)
    dist = {start: 0}
    todo = [start]
    for v in todo:  # todo grows as the search goes: a queue
        for p in v:
            for nb in adjacent(p, size):
                u = vertex(nb)
                if u not in dist:
                    dist[u] = dist[v] + 1
                    todo.append(u)
    return {p: d for v, d in dist.items() for p in v}


def liberties(color, stones, size: int) -> frozenset[int]:
    """The empty points next to any of the stones."""
    return frozenset(nb for s in stones for nb in adjacent(s, size) if color[nb] == EMPTY)


def strings(color, size: int) -> list[tuple[frozenset[int], frozenset[int]]]:
    """Every string on the board as (stones, liberties)."""
    out = []
    done: set[int] = set()
    for loc in board_points(size):
        if color[loc] in (BLACK, WHITE) and loc not in done:
            stones = string_at(color, loc, size)
            done |= stones
            out.append((stones, liberties(color, stones, size)))
    return out


def after_move(color, loc: int, player: int, size: int) -> tuple[list[int], frozenset[int]]:
    """Place a stone on an empty point and take the opponent's strings left
    without liberties. Returns (the new colour list, the captured points).

    The player's own string is left as it is, even without liberties: a
    caller that cares about suicide checks it (see is_legal).
    """
    assert color[loc] == EMPTY, f"{loc} is not empty"
    new = [int(c) for c in color]
    new[loc] = player
    opp = 3 - player
    captured: set[int] = set()
    for nb in adjacent(loc, size):
        if new[nb] == opp and nb not in captured:
            stones = string_at(new, nb, size)
            if not liberties(new, stones, size):
                captured |= stones
    for s in captured:
        new[s] = EMPTY
    return new, frozenset(captured)


def is_legal(color, loc: int, player: int, size: int, ko: int = -1) -> bool:
    """Empty, not the simple-ko point, and the new string keeps a liberty."""
    if color[loc] != EMPTY or loc == ko:
        return False
    new, _ = after_move(color, loc, player, size)
    return bool(liberties(new, string_at(new, loc, size), size))


def legal_moves(color, player: int, size: int, ko: int = -1) -> set[int]:
    """Every legal on-board move (pass excluded) under the simple-ko rule."""
    return {loc for loc in board_points(size) if is_legal(color, loc, player, size, ko)}


def libs_after(color, loc: int, player: int, size: int) -> int:
    """Liberties of the string that a move at loc makes, after its captures."""
    new, _ = after_move(color, loc, player, size)
    return len(liberties(new, string_at(new, loc, size), size))


def captures_of(color, loc: int, player: int, size: int) -> int:
    """Stones a move at loc would capture."""
    return len(after_move(color, loc, player, size)[1])


def ko_after(color, loc: int, player: int, size: int) -> int:
    """The simple-ko point a move creates, or -1.

    A ko: the move captures exactly one stone, and the capturing stone is
    then a lone stone with one liberty (the point it just emptied).
    """
    new, captured = after_move(color, loc, player, size)
    stones = string_at(new, loc, size)
    if len(captured) == 1 and len(stones) == 1 and len(liberties(new, stones, size)) == 1:
        return next(iter(captured))
    return -1


def zobrist_hash(color, size: int) -> int:
    """XOR of POSITION_KEYS[colour, loc] over every stone (empty board: 0)."""
    h = 0
    for loc in board_points(size):
        if color[loc] in (BLACK, WHITE):
            h ^= int(POSITION_KEYS[color[loc], loc])
    return h


# --- search ------------------------------------------------------------------


def score_of_owners(own, komi: float) -> float:
    """A finished game's area score, black minus white minus komi, from its owner map
    (+1 a point black's, -1 white's, 0 dame)."""
    return sum(1 for x in own if x > 0) - sum(1 for x in own if x < 0) - komi


def node_scores(sims) -> dict[int, tuple[int, float, float]]:
    """sims: (the nodes a simulation passed through, its final score) for each one ->
    {node: (simulations through it, their mean score, its population standard deviation)}."""
    through: dict[int, list[float]] = {}
    for nodes, score in sims:
        for n in nodes:
            through.setdefault(n, []).append(score)
    out = {}
    for n, scores in through.items():
        mean = sum(scores) / len(scores)
        var = sum((x - mean) ** 2 for x in scores) / len(scores)
        out[n] = (len(scores), mean, math.sqrt(var))
    return out


# --- Bradley-Terry / MM (Coulom 2007, section 2) ------------------------------


def bt_positions(batches) -> list[tuple[list[list[int]], int]]:
    """Every position of a stream of Batches as (teams of its real candidates,
    index of the expert's team among them); padding candidates dropped."""
    out = []
    for b in batches:
        rows = zip(b.feat.tolist(), b.mask.tolist(), b.winner.tolist(), strict=True)
        for feat, mask, winner in rows:
            legal = [m for m, ok in enumerate(mask) if ok]
            out.append(([[f for f in feat[m] if f != 0] for m in legal], legal.index(winner)))
    return out


def bt_log_likelihood(log_gamma, batches) -> float:
    """sum over positions of log(gamma(expert team) / sum of the legal teams' gammas),
    each team's gamma a plain product of its members' gammas."""
    import math

    gamma = [math.exp(v) for v in log_gamma]
    total = 0.0
    for teams, w in bt_positions(batches):
        strengths = [math.prod(gamma[f] for f in team) for team in teams]
        total += math.log(strengths[w] / sum(strengths))
    return total


def bt_log_prior(log_gamma, prior_wins: float = 1.0) -> float:
    """prior_wins virtual wins and as many virtual losses of every level but 0 against
    gamma 1."""
    import math

    return sum(
        prior_wins * math.log(g / (g + 1)) + prior_wins * math.log(1 / (g + 1))
        for g in map(math.exp, log_gamma[1:])
    )


def mm_surrogate_gain(log_gamma, new_log_gamma, batches, prior_wins: float = 1.0) -> float:
    """The rise of MM's minorizing function from log_gamma to new_log_gamma (Hunter
    2004): each log-sum log E_j at new gammas replaced by its tangent at the old ones,
    log E_j + (E_j' - E_j) / E_j, which lies above it, and each prior term
    -2 a log(1 + gamma) the same way (a = prior_wins); plain loops over positions,
    teams and levels."""
    import math

    old = [math.exp(v) for v in log_gamma]
    new = [math.exp(v) for v in new_log_gamma]
    total = 0.0
    for teams, w in bt_positions(batches):
        e_old = sum(math.prod(old[f] for f in team) for team in teams)
        e_new = sum(math.prod(new[f] for f in team) for team in teams)
        total += sum(new_log_gamma[f] - log_gamma[f] for f in teams[w])
        total -= (e_new - e_old) / e_old
    for i in range(1, len(old)):
        lin = new_log_gamma[i] - log_gamma[i] - 2.0 * (new[i] - old[i]) / (1.0 + old[i])
        total += prior_wins * lin
    return total


def mm_group_update(log_gamma, batches, offset: int, size: int, prior_wins: float = 1.0):
    """One MM update of the levels [offset, offset + size) by Coulom's formula
    gamma_i <- W_i / sum_j C_ij / E_j (Coulom 2007, 2.5.3), plus the prior's
    virtual wins and losses against gamma 1 (3.3: one of each; here prior_wins),
    with plain loops over positions, candidates and features.

    Returns (new log-gammas, W, denominators) as lists; W and the
    denominators are indexed like log_gamma and leave out the prior.
    """
    import math

    n = len(log_gamma)
    gamma = [math.exp(v) for v in log_gamma]
    wins = [0.0] * n
    denom = [0.0] * n
    for teams, w in bt_positions(batches):
        strengths = [math.prod(gamma[f] for f in team) for team in teams]
        e = sum(strengths)
        for i in teams[w]:
            wins[i] += 1.0
        for team, s in zip(teams, strengths, strict=True):
            for i in team:
                mates = s / gamma[i]  # C_ij: the strength of i's team mates
                denom[i] += mates / e
    new = list(log_gamma)
    for i in range(offset, offset + size):
        w_i = wins[i] + prior_wins  # the virtual wins
        d_i = denom[i] + 2.0 * prior_wins / (gamma[i] + 1.0)  # virtual games: C = 1, E = gamma + 1
        new[i] = math.log(w_i / d_i)
    return new, wins, denom


# --- evaluation ----------------------------------------------------------------


def expert_rank(log_probs, mask, winner: int) -> int:
    """1 + the number of other real candidates at least as probable as the
    expert move (ties counted as ranked ahead). One position: lists over M."""
    lw = log_probs[winner]
    pairs = enumerate(zip(log_probs, mask, strict=True))
    return 1 + sum(1 for m, (lp, ok) in pairs if ok and m != winner and lp >= lw)


# --- tactical features (Coulom 2007, Table 1; see gomove/features/tactical.py) ---
# ``last``/``last2`` are the locs of the previous move and the one before it
# (PASS -1, none NO_MOVE -2). Functions with ``ladders=False`` read no ladder:
# the levels that only a ladder decides collapse (capture 4/5 -> 4, extension
# 1/2 -> 1, atari 1 -> the level it would have without the ladder).


def coulom_distance(a: int, b: int, size: int) -> int:
    """d(dx, dy) = dx + dy + max(dx, dy) between two on-board points (Table 1)."""
    (ra, ca), (rb, cb) = from_loc(a, size), from_loc(b, size)
    dx, dy = abs(ca - cb), abs(ra - rb)
    return dx + dy + max(dx, dy)


def distance_level(loc: int, prev: int, size: int) -> int:
    """dist_prev / dist_prev2: 0 when prev is a pass or none; else level 1 for
    d <= 2 (d = 0: the point of a captured stone played again), d - 1 for
    d = 3..16, and 16 for d >= 17."""
    if prev < 0:
        return 0
    d = coulom_distance(loc, prev, size)
    if d <= 2:
        return 1
    if d >= 17:
        return 16
    return d - 1


def border_level(loc: int, size: int) -> int:
    """The line the point is on (1 = edge) for lines 1..4, else 0."""
    r, c = from_loc(loc, size)
    line = 1 + min(r, c, size - 1 - r, size - 1 - c)
    return line if line <= 4 else 0


def pass_level(last: int) -> int:
    """The pass candidate: 2 after a pass, 1 otherwise (also with no previous move)."""
    return 2 if last == -1 else 1


def is_self_atari(color, loc: int, player: int, size: int) -> bool:
    """The move captures nothing and its string is left with one liberty."""
    return captures_of(color, loc, player, size) == 0 and libs_after(color, loc, player, size) == 1


def is_atari(color, loc: int, player: int, size: int) -> bool:
    """Some adjacent opponent string has two liberties before the move and one after."""
    new, _ = after_move(color, loc, player, size)
    for nb in adjacent(loc, size):
        if color[nb] == 3 - player:
            stones = string_at(color, nb, size)
            before = len(liberties(color, stones, size))
            if before == 2 and len(liberties(new, stones, size)) == 1:
                return True
    return False


def new_atari_strings(color, last: int, player: int, size: int) -> set[frozenset[int]]:
    """player's strings that touch the previous move and have one liberty."""
    if last < 0:
        return set()
    out = set()
    for nb in adjacent(last, size):
        if color[nb] == player:
            stones = string_at(color, nb, size)
            if len(liberties(color, stones, size)) == 1:
                out.add(stones)
    return out


def is_extension(color, loc: int, player: int, size: int, last: int) -> bool:
    """The move is the liberty of one of player's strings in a new atari."""
    strings_in_atari = new_atari_strings(color, last, player, size)
    return any(loc in liberties(color, s, size) for s in strings_in_atari)


def libs_of(color, stone: int, size: int) -> int:
    """Liberties of the string through the stone at stone."""
    return len(liberties(color, string_at(color, stone, size), size))


def ladder_caught(color, stone: int, size: int, depth: int = 0) -> bool:
    """Is the string at stone, in atari with its owner to move, caught in a ladder?

    Recursive reading of the rules in tactical.py's docstring: the defender
    escapes by capturing any attacking string in atari next to it; otherwise it
    extends at its liberty (caught if that is illegal): 3+ liberties escape,
    1 is caught, 2 let the attacker try each liberty that puts it back in
    atari. Ko is ignored; after 79 attacker moves the defender escapes.
    """
    defender = color[stone]
    attacker = 3 - defender
    stones = string_at(color, stone, size)
    libs = liberties(color, stones, size)
    if len(libs) != 1:
        return not libs
    for s in stones:
        for nb in adjacent(s, size):
            if color[nb] == attacker and libs_of(color, nb, size) == 1:
                return False
    (lib,) = libs
    if not is_legal(color, lib, defender, size):
        return True
    ext, _ = after_move(color, lib, defender, size)
    libs = liberties(ext, string_at(ext, stone, size), size)
    if len(libs) != 2:
        return len(libs) <= 1
    if depth >= 79:
        return False
    for a in sorted(libs):
        if not is_legal(ext, a, attacker, size):
            continue
        after, _ = after_move(ext, a, attacker, size)
        if len(liberties(after, string_at(after, stone, size), size)) != 1:
            continue
        if ladder_caught(after, stone, size, depth + 1):
            return True
    return False


def capture_level(color, loc: int, player: int, size: int, last: int, ladders: bool = True) -> int:
    """The lowest, over the strings S the move captures, of 1 (S touches a
    string in a new atari), 2 (S holds the previous move), 3 (the move touches
    the previous move's string), 4 (S's owner would escape by extending) and
    5 (it would be caught in a ladder); 0 when nothing is captured."""
    opp = 3 - player
    atari = new_atari_strings(color, last, player, size)
    prev = string_at(color, last, size) if last >= 0 and color[last] == opp else frozenset()
    best = 0
    for nb in adjacent(loc, size):
        if color[nb] != opp:
            continue
        stones = string_at(color, nb, size)
        if len(liberties(color, stones, size)) != 1:
            continue
        around = {nb2 for st in stones for nb2 in adjacent(st, size)}
        if any(around & s for s in atari):
            level = 1
        elif last in stones:
            level = 2
        elif any(nb2 in prev for nb2 in adjacent(loc, size)):
            level = 3
        elif ladders and ladder_caught(color, nb, size):
            level = 5
        else:
            level = 4
        best = level if best == 0 else min(best, level)
    return best


def extension_level(color, loc: int, player: int, size: int, last: int, ladders: bool = True):
    """The lowest, over player's strings in a new atari whose liberty is loc,
    of 1 (extending escapes) and 2 (still caught in a ladder); 0 for none."""
    levels = [
        2 if ladders and ladder_caught(color, min(s), size) else 1
        for s in new_atari_strings(color, last, player, size)
        if loc in liberties(color, s, size)
    ]
    return min(levels, default=0)


def atari_level(color, loc: int, player: int, size: int, ko_on_board: bool, ladders=True):
    """0 when the move puts no adjacent string from two liberties to one; else
    1 when one of those strings is then caught in a ladder, 2 when a ko is on
    the board, 3 otherwise."""
    if not is_atari(color, loc, player, size):
        return 0
    if ladders:
        new, _ = after_move(color, loc, player, size)
        for nb in adjacent(loc, size):
            if color[nb] == 3 - player:
                if libs_of(color, nb, size) == 2 and ladder_caught(new, nb, size):
                    return 1
    return 2 if ko_on_board else 3


# --- shape patterns (Coulom 2007, 3.2; see gomove/features/patterns.py) -------

# the 8 symmetries of the square, (dx, dy) -> (dx', dy')
SQUARE_SYMMETRIES = (
    lambda x, y: (x, y),
    lambda x, y: (y, -x),
    lambda x, y: (-x, -y),
    lambda x, y: (-y, x),
    lambda x, y: (x, -y),
    lambda x, y: (-x, y),
    lambda x, y: (y, x),
    lambda x, y: (-y, -x),
)


def pattern_state(color, row: int, col: int, player: int, size: int) -> int:
    """0 empty, 1 player's stone, 2 opponent's stone, 3 off the board."""
    if not (0 <= row < size and 0 <= col < size):
        return 3
    c = color[to_loc(row, col, size)]
    if c == EMPTY:
        return 0
    return 1 if c == player else 2


def pattern_hash(color, loc: int, player: int, size: int, radius: int, dx, dy, keys) -> int:
    """Canonical hash of the template of that radius around loc: for each of the
    8 symmetries g, the XOR over offsets p = (dx, dy) with 0 < d(p) <= radius of
    keys[p, state of the point at loc + g(p)]; the minimum over g.

    dx, dy, keys: the arrays of gomove.features.patterns.make_templates (the
    keys of offset p are keys[i] where (dx[i], dy[i]) == p); dx is a column
    offset, dy a row offset.
    """
    index = {(int(x), int(y)): i for i, (x, y) in enumerate(zip(dx, dy, strict=True))}
    row, col = from_loc(loc, size)
    offsets = [p for p in index if 0 < _offset_distance(*p) <= radius]
    best = None
    for g in SQUARE_SYMMETRIES:
        h = 0
        for p in offsets:
            x, y = g(*p)
            h ^= int(keys[index[p], pattern_state(color, row + y, col + x, player, size)])
        best = h if best is None else min(best, h)
    return best


# --- light features (Coulom 2007, 4.1; see gomove/features/light.py) ----------


def light_digits(color, loc: int, player: int, size: int) -> list[int]:
    """The 8 states of loc's 3x3 neighbourhood: below, left, right, above (0 empty,
    1 player's, 2 opponent's, 3 off, 4 player's in atari, 5 opponent's in atari),
    then below-left, below-right, above-left, above-right (0..3 as pattern_state)."""
    row, col = from_loc(loc, size)
    out = []
    for dx, dy in ((0, -1), (-1, 0), (1, 0), (0, 1)):
        s = pattern_state(color, row + dy, col + dx, player, size)
        if s in (1, 2) and libs_of(color, to_loc(row + dy, col + dx, size), size) == 1:
            s += 3
        out.append(s)
    for dx, dy in ((-1, -1), (1, -1), (-1, 1), (1, 1)):
        out.append(pattern_state(color, row + dy, col + dx, player, size))
    return out


def light_code(color, loc: int, player: int, size: int) -> int:
    """sum orth_i 6^i + 1296 sum diag_j 4^j over light_digits."""
    d = light_digits(color, loc, player, size)
    return sum(s * 6**i for i, s in enumerate(d[:4])) + 1296 * sum(
        s * 4**j for j, s in enumerate(d[4:])
    )


def contiguous(loc: int, last: int, size: int) -> bool:
    """loc is one of the 8 points around the previous move."""
    if last < 0:
        return False
    (r, c), (rl, cl) = from_loc(loc, size), from_loc(last, size)
    return max(abs(r - rl), abs(c - cl)) == 1


def _offset_distance(x: int, y: int) -> int:
    x, y = abs(x), abs(y)
    return x + y + max(x, y)


def played_pattern_counts(games, radii, dx, dy, keys):
    """Counter of (radius, canonical hash) over every non-pass move of the games
    (gomove.reading.sgf.Game), replayed with after_move from their setup stones."""
    from collections import Counter

    counts: Counter = Counter()
    for game in games:
        size = game.size
        color = [EMPTY] * ((size + 2) * (size + 2))
        for c, r, col in game.setup:
            color[to_loc(r, col, size)] = c
        for player, move in game.moves:
            if move is None:
                continue
            loc = to_loc(move[0], move[1], size)
            for radius in radii:
                counts[radius, pattern_hash(color, loc, player, size, radius, dx, dy, keys)] += 1
            color, _ = after_move(color, loc, player, size)
    return counts


# --- factorization Bradley-Terry and LFR (Xiao and Müller 2016; see gomove/models/fbt.py) ---


def fbt_strength(w, v, team) -> float:
    """E = sum_f w_f + 1/2 sum_{f != g} <v_f, v_g> by the explicit double sum over
    the team's members (a list of feature indices, the ``none`` index 0 left out)."""
    members = [f for f in team if f != 0]
    e = sum(w[f] for f in members)
    for a, f in enumerate(members):
        for b, g in enumerate(members):
            if a != b:
                e += 0.5 * sum(x * y for x, y in zip(v[f], v[g], strict=True))
    return e


def fbt_log_loss_grad(w, v, batches):
    """Mean over positions of -log P(expert move) and its gradient in closed form:
    -h(winner) + sum_m P(m) h(m), with h(team) for w_f the number of times f is
    in the team and for v_{f,q} the sum of v_{t,q} over the other members t
    (the derivative of ``fbt_strength``). Returns (loss, grad_w, grad_v) as lists."""
    import math

    k = len(v[0])
    grad_w = [0.0] * len(w)
    grad_v = [[0.0] * k for _ in v]
    total = 0.0
    positions = bt_positions(batches)
    for teams, win in positions:
        e = [fbt_strength(w, v, t) for t in teams]
        top = max(e)
        z = sum(math.exp(x - top) for x in e)
        p = [math.exp(x - top) / z for x in e]
        total -= math.log(p[win])
        for m, team in enumerate(teams):
            coef = p[m] - (1.0 if m == win else 0.0)
            for a, f in enumerate(team):
                grad_w[f] += coef
                for q in range(k):
                    mates = sum(v[t][q] for b, t in enumerate(team) if b != a)
                    grad_v[f][q] += coef * mates
    n = len(positions)
    return (
        total / n,
        [g / n for g in grad_w],
        [[g / n for g in row] for row in grad_v],
    )


def lfr_loss(w, v, batches) -> float:
    """Mean over positions of the mean over the other legal candidates o of
    log(1 + exp(E_o - E_winner)) (= -log sigmoid(E_winner - E_o)); 0 for a
    position with the expert move alone."""
    import math

    total = 0.0
    positions = bt_positions(batches)
    for teams, win in positions:
        e = [fbt_strength(w, v, t) for t in teams]
        pairs = [math.log1p(math.exp(e[o] - e[win])) for o in range(len(teams)) if o != win]
        total += sum(pairs) / len(pairs) if pairs else 0.0
    return total / len(positions)


def oracle_is_eye(color, loc: int, player: int, size: int) -> bool:
    """Empty, 4 neighbours own or off-board, opponent diagonals <= 1 (0 at the edge)."""
    if color[loc] != EMPTY:
        return False
    if any(color[nb] != player for nb in adjacent(loc, size)):
        return False
    r, c = from_loc(loc, size)
    diagonals = [(r + dr, c + dc) for dr in (-1, 1) for dc in (-1, 1)]
    on_board = [(rr, cc) for rr, cc in diagonals if 0 <= rr < size and 0 <= cc < size]
    n_opp = sum(color[(rr + 1) * (size + 2) + cc + 1] == 3 - player for rr, cc in on_board)
    return n_opp == 0 if len(on_board) < 4 else n_opp <= 1


def decisive_atari(color, a: int, b: int, attacker: int, size: int) -> bool:
    """gomove.playout.pattern.tactics's decisive atari at a on the string with liberties a
    and b, played out: a captures nothing and keeps two liberties, the answer at b
    captures nothing and leaves at most one. (The caller checks the strings in atari.)"""
    if captures_of(color, a, attacker, size):
        return False
    after, _ = after_move(color, a, attacker, size)
    if len(liberties(after, string_at(after, a, size), size)) < 2:
        return False
    reply, captured = after_move(after, b, 3 - attacker, size)
    return not captured and len(liberties(reply, string_at(reply, b, size), size)) <= 1


def tactical_moves(color, last: int, player: int, size: int, ko: int = -1) -> set[int]:
    """gomove.playout.pattern.tactics by its definitions, each move played out on a copy."""
    opp = 3 - player
    if last < 0 or color[last] != opp:
        return set()
    local = {
        string_at(color, p, size)
        for p in [last, *adjacent(last, size)]
        if color[p] in (BLACK, WHITE)
    }
    out: set[int] = set()
    for stones in local:
        libs = liberties(color, stones, size)
        next_to = {nb for s in stones for nb in adjacent(s, size)}
        owner = color[next(iter(stones))]
        attacker = opp if owner == player else player
        attacker_in_atari = any(
            color[nb] == attacker and libs_of(color, nb, size) == 1 for nb in next_to
        )
        ataris = {
            a
            for a in libs
            if len(libs) == 2
            and not attacker_in_atari
            and decisive_atari(color, a, next(iter(libs - {a})), attacker, size)
        }
        escapes = {x for x in libs if libs_after(color, x, player, size) >= 3}
        if owner == player and len(libs) == 1:
            for nb in next_to:
                if color[nb] == opp and libs_of(color, nb, size) == 1:
                    out |= liberties(color, string_at(color, nb, size), size)
            out |= escapes
        elif owner == player and len(libs) == 2 and ataris:
            out |= escapes
        elif owner == opp and len(libs) == 1:
            out |= libs
        elif owner == opp:
            out |= ataris
    return {
        x
        for x in out
        if is_legal(color, x, player, size, ko) and not oracle_is_eye(color, x, player, size)
    }


# The dead eye spaces and their vital points (X), drawn once; every rotation and
# reflection of each is looked up (gomove.playout.pattern.nakade).
DEAD_SHAPES = {
    "straight three": ["oXo"],
    "bent three": ["Xo", "o."],
    "pyramid four": ["oXo", ".o."],
    "bulky five": ["oo", "Xo", "o."],
    "cross five": [".o.", "oXo", ".o."],
    "rabbity six": [".o.", "oXo", ".oo"],
}


def _turned(rc: tuple[int, int], flip: bool, turns: int) -> tuple[int, int]:
    """A cell reflected in the diagonal (flip), then turned a quarter turns times."""
    r, c = (rc[1], rc[0]) if flip else rc
    for _ in range(turns):
        r, c = c, -r
    return r, c


def _dead_shape_table() -> dict[frozenset[tuple[int, int]], tuple[int, int]]:
    """{cells normalised to a (0, 0) corner: vital cell} over the 8 symmetries."""
    table = {}
    for rows in DEAD_SHAPES.values():
        cells = [(r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch != "."]
        vital = next((r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == "X")
        for flip in (False, True):
            for turns in range(4):
                moved = [_turned(rc, flip, turns) for rc in cells]
                r0, c0 = min(r for r, _ in moved), min(c for _, c in moved)
                vr, vc = _turned(vital, flip, turns)
                table[frozenset((r - r0, c - c0) for r, c in moved)] = (vr - r0, vc - c0)
    return table


DEAD_SHAPE_TABLE = _dead_shape_table()


def nakade_point(color, last: int, player: int, size: int, ko: int = -1) -> int:
    """gomove.playout.pattern.nakade by its definitions: the empty region next to the
    opponent's move last, bordered by the opponent's stones only, of at most six
    points, holding every empty neighbour of last, one of DEAD_SHAPES: its vital
    point when legal, else -1."""
    if last < 0 or color[last] != 3 - player:
        return -1
    empties = [nb for nb in adjacent(last, size) if color[nb] == EMPTY]
    if not empties:
        return -1
    region = region_at(color, empties[0], size)
    if len(region) > 6 or not set(empties) <= region:
        return -1
    if any(color[nb] == player for p in region for nb in adjacent(p, size)):
        return -1
    cells = [from_loc(p, size) for p in region]
    r0, c0 = min(r for r, _ in cells), min(c for _, c in cells)
    vital = DEAD_SHAPE_TABLE.get(frozenset((r - r0, c - c0) for r, c in cells))
    if vital is None:
        return -1
    v = to_loc(vital[0] + r0, vital[1] + c0, size)
    return v if is_legal(color, v, player, size, ko) else -1


def oracle_area(color, size: int, komi: float) -> tuple[float, list[int]]:
    """(black - white - komi, owner per flat point) by flood fill of empty regions."""
    owner = [0] * (size * size)
    seen: set[int] = set()
    for loc in board_points(size):
        r, c = from_loc(loc, size)
        if color[loc] != EMPTY:
            owner[r * size + c] = int(color[loc])
            continue
        if loc in seen:
            continue
        region, border, todo = {loc}, set(), [loc]
        while todo:
            p = todo.pop()
            for nb in adjacent(p, size):
                if color[nb] == EMPTY and nb not in region:
                    region.add(nb)
                    todo.append(nb)
                elif color[nb] != EMPTY:
                    border.add(int(color[nb]))
        seen |= region
        region_owner = border.pop() if len(border) == 1 else 0
        for p in region:
            rr, cc = from_loc(p, size)
            owner[rr * size + cc] = region_owner
    return owner.count(BLACK) - owner.count(WHITE) - komi, owner


# --- the comparison paper's rankers (Wistuba et al. 2012, III), slow and plain ---------
# A position is (teams, winner): teams a list of lists of feature indices.


def ref_pr(positions, n_features: int) -> list[float]:
    """theta_f = W_f / A_f: W counts positions whose expert team holds f, A every team."""
    wins, appear = [0] * n_features, [0] * n_features
    for teams, winner in positions:
        for t, team in enumerate(teams):
            for f in team:
                appear[f] += 1
                wins[f] += t == winner
    return [w / a if a else 0.0 for w, a in zip(wins, appear, strict=True)]


def ref_bar(positions, mu: list[float], sigma2: list[float], beta2: float, kappa: float):
    """Algorithm 1 of Wistuba et al. 2012 as printed, position after position (mu, sigma2
    lists updated in place). Team 1 is the expert's; its members are updated first, then
    the other teams' in order. Returns the positions whose expert team had the strictly
    highest mean before its update."""
    hits = 0
    for teams, winner in positions:
        order = [winner] + [t for t in range(len(teams)) if t != winner]
        tmu = {t: sum(mu[f] for f in teams[t]) for t in order}
        ts2 = {t: sum(sigma2[f] for f in teams[t]) for t in order}
        hits += all(tmu[winner] > tmu[t] for t in order[1:])

        def p(i, q, tmu=tmu, ts2=ts2):  # P(team i beats team q), Bradley-Terry over c_iq
            c = math.sqrt(ts2[i] + ts2[q] + 2 * beta2)
            return math.exp(tmu[i] / c) / (math.exp(tmu[i] / c) + math.exp(tmu[q] / c)), c

        for i in order:
            omega = delta = 0.0
            if i == winner:
                for q in order[1:]:
                    p1q, c = p(winner, q)
                    pq1 = 1 - p1q
                    omega += ts2[i] * pq1 / c
                    delta += math.sqrt(ts2[i]) / c * ts2[i] / c**2 * p1q * pq1
            else:
                pi1, c = p(i, winner)
                omega = -ts2[i] * pi1 / c
                delta = math.sqrt(ts2[i]) / c * ts2[i] / c**2 * pi1 * (1 - pi1)
            for f in teams[i]:
                share = sigma2[f] / ts2[i]
                mu[f] += share * omega
                sigma2[f] *= max(1 - share * delta, kappa)
    return hits


def _vw(t: float) -> tuple[float, float]:
    """phi(t) / Phi(t) and v (v + t), straight from the definitions (moderate t only)."""
    v = math.exp(-t * t / 2) / math.sqrt(2 * math.pi) / (0.5 * math.erfc(-t / math.sqrt(2)))
    return v, v * (v + t)


def ref_ep_position(teams, winner: int, mu, sigma2, beta2: float, rounds: int = 2000):
    """EP on one position's factor graph (Wistuba et al. 2012, Fig. 3) by a flooding
    schedule: every round computes all factor-to-variable messages from the messages of
    the round before (damped by half), until nothing moves. Returns {f: (mean, var)}
    of the posterior marginals. Messages are (precision, precision * mean)."""
    feats = sorted({f for team in teams for f in team})
    prior = {f: (1 / sigma2[f], mu[f] / sigma2[f]) for f in feats}
    k = len(teams)
    to_theta = {(t, j): (0.0, 0.0) for t in range(k) for j in range(len(teams[t]))}
    h_w = {q: (0.0, 0.0) for q in range(k) if q != winner}  # order factor q -> x_winner
    h_q = {q: (0.0, 0.0) for q in range(k) if q != winner}  # order factor q -> x_q

    def marg(f):
        pi, tau = prior[f]
        for (t, j), (p, u) in to_theta.items():
            if teams[t][j] == f:
                pi, tau = pi + p, tau + u
        return pi, tau

    for _ in range(rounds):
        # variable -> sum factor messages (cavities) and sum factor -> x
        cav = {}
        for (t, j), (p, u) in to_theta.items():
            pi, tau = marg(teams[t][j])
            cav[(t, j)] = (tau - u) / (pi - p), 1 / (pi - p)
        new_x = {}
        for t in range(k):
            m = sum(cav[(t, j)][0] for j in range(len(teams[t])))
            v = sum(cav[(t, j)][1] for j in range(len(teams[t]))) + beta2
            new_x[t] = (1 / v, m / v)
        # order factors
        new_hw, new_hq = {}, {}
        for q in h_w:
            pw = new_x[winner][0] + sum(h_w[r][0] for r in h_w if r != q)
            tw = new_x[winner][1] + sum(h_w[r][1] for r in h_w if r != q)
            mw, vw = tw / pw, 1 / pw
            mq, vq = new_x[q][1] / new_x[q][0], 1 / new_x[q][0]
            var = vw + vq
            v, w = _vw((mw - mq) / math.sqrt(var))
            nvw, nmw = vw * (1 - vw / var * w), mw + vw / math.sqrt(var) * v
            nvq, nmq = vq * (1 - vq / var * w), mq - vq / math.sqrt(var) * v
            new_hw[q] = (1 / nvw - pw, nmw / nvw - tw)
            new_hq[q] = (1 / nvq - 1 / vq, nmq / nvq - mq / vq)
        # x -> sum factor, then sum factor -> members
        new_theta = {}
        for t in range(k):
            if t == winner:
                pu, tu = sum(h[0] for h in new_hw.values()), sum(h[1] for h in new_hw.values())
            else:
                pu, tu = new_hq[t]
            for j in range(len(teams[t])):
                if pu <= 0:
                    new_theta[(t, j)] = (0.0, 0.0)
                    continue
                others = [cav[(t, i)] for i in range(len(teams[t])) if i != j]
                var = 1 / pu + beta2 + sum(v for _, v in others)
                mean = tu / pu - sum(m for m, _ in others)
                new_theta[(t, j)] = (1 / var, mean / var)

        def damp(old, new):
            return {
                key: tuple(0.5 * a + 0.5 * b for a, b in zip(old[key], new[key], strict=True))
                for key in old
            }

        moved = max(
            abs(a - b)
            for key in to_theta
            for a, b in zip(to_theta[key], new_theta[key], strict=True)
        )
        to_theta = damp(to_theta, new_theta)
        h_w, h_q = damp(h_w, new_hw), damp(h_q, new_hq)
        if moved < 1e-13:
            break
    out = {}
    for f in feats:
        pi, tau = marg(f)
        out[f] = (tau / pi, 1 / pi)
    return out
