"""Stern's territory CRF: the samplers against exact enumeration, the gradient against finite
differences, parameters recovered from data the model drew, features and files."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from gomove.board.board import BLACK, WHITE, board_from_points, signed_points
from gomove.features.light_gammas import LightGammas
from gomove.models.territory import batched
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.features import FEATURE_SETS, features
from gomove.models.territory.playout_counts import mc_counts
from gomove.models.territory.reading import (
    board_symmetries,
    components,
    geometry,
    grid_edges,
    string_view,
)
from gomove.models.territory.sampler import chain_rng, first_spins, run_chain, run_chains
from gomove.playout.pattern.playout import pattern_player
from gomove.playout.pattern.tables import build_tables
from gomove.train.resume import Resume
from gomove.train.schemas import TerritoryConfig
from gomove.train.territory.fit import (
    edge_products,
    energy,
    fit,
    labelled_positions,
    pseudo_log_likelihood,
)


def exact(h: np.ndarray, edges: np.ndarray, w: np.ndarray):
    """E[s_i], E[s_i s_j] and log Z by summing over all 2^N states."""
    states = np.array(list(itertools.product([-1.0, 1.0], repeat=len(h))))
    pairs = states[:, edges[:, 0]] * states[:, edges[:, 1]]
    e = states @ h + pairs @ w
    log_z = np.logaddexp.reduce(e)
    p = np.exp(e - log_z)
    return p @ states, p @ pairs, log_z


def random_model(size: int, seed: int):
    rng = np.random.default_rng(seed)
    edges = grid_edges(size)
    h = rng.normal(0.0, 0.6, size * size)
    w = rng.normal(0.3, 0.7, len(edges))  # couplings of both signs
    return h, edges, w


@pytest.mark.parametrize("size", [3, 4])
def test_compiled_sampler_matches_exact_enumeration(size):
    h, edges, w = random_model(size, size)
    mean0, pair0, _ = exact(h, edges, w)
    s = first_spins(h, 0)
    mean, pair, totals = run_chain(h, edges, w, s, 200_000, 50, chain_rng(1), True)
    # couplings of both signs frustrate some loops and slow the mixing: 200,000 sweeps
    # leave errors of about 0.005 (0.001 at a million; a wrong sampler stays off)
    assert np.abs(mean - mean0).max() < 0.02
    assert np.abs(pair - pair0).max() < 0.02
    assert abs(totals.mean() - mean0.sum()) < 0.1


def test_torch_sweeps_match_exact_enumeration():
    h, edges, w = random_model(3, 7)
    mean0, pair0, _ = exact(h, edges, w)
    b = 200
    hs = torch.tensor(h).expand(b, -1).contiguous()
    ws = torch.tensor(w).expand(b, -1).contiguous()
    gen = torch.Generator().manual_seed(0)
    s = torch.where(torch.rand(b, len(h), generator=gen, dtype=torch.float64) < 0.5, 1.0, -1.0)
    _, mean, pair = batched.run_chains(hs, ws, s, torch.tensor(edges), 100, 20, gen)
    assert np.abs(mean.mean(0).numpy() - mean0).max() < 0.03
    assert np.abs(pair.mean(0).numpy() - pair0).max() < 0.03


def test_torch_clusters_are_the_connected_components():
    size = 5
    edges = grid_edges(size)
    rng = np.random.default_rng(3)
    open_bond = rng.random((4, len(edges))) < 0.5
    lab = batched.clusters(torch.tensor(open_bond), torch.tensor(edges), size * size).numpy()
    for k in range(4):  # reference: union-find in Python
        parent = list(range(size * size))

        def find(i, parent=parent):
            while parent[i] != i:
                i = parent[i]
            return i

        for e in np.flatnonzero(open_bond[k]):
            parent[find(edges[e, 0])] = find(edges[e, 1])
        roots = [find(i) for i in range(size * size)]
        for i, j in itertools.combinations(range(size * size), 2):
            assert (roots[i] == roots[j]) == (lab[k, i] == lab[k, j])


def test_parallel_chains_equal_single_chains_with_the_same_states():
    h, edges, w = random_model(4, 2)
    hs = np.stack([h, -h, 0.5 * h])
    ws = np.stack([w, w, -w])
    s = np.stack([first_spins(x, 0) for x in hs])
    rng = np.array([chain_rng(9, k) for k in range(3)])
    singles = []
    for k in range(3):
        sk = s[k].copy()
        m, p, _ = run_chain(hs[k], edges, ws[k], sk, 5, 0, rng[k].copy(), True)
        singles.append((sk, m, p))
    mean, pair = run_chains(hs, edges, ws, s, 5, rng)
    for k in range(3):
        np.testing.assert_array_equal(s[k], singles[k][0])
        np.testing.assert_allclose(mean[k], singles[k][1])
        np.testing.assert_allclose(pair[k], singles[k][2])


def test_likelihood_gradient_matches_finite_differences():
    """The fit's surrogate (data energy minus the energy of the model's expectations) has
    the log-likelihood's gradient: checked with exact expectations on a 3x3 board."""
    size = 3
    rng = np.random.default_rng(5)
    crf = TerritoryCRF("rich")
    with torch.no_grad():
        crf.field.copy_(torch.tensor(rng.normal(0, 0.3, crf.fs.n_field)))
        crf.coupling.copy_(torch.tensor(rng.normal(0.2, 0.3, crf.fs.n_coupling)))
    colour = np.array([1, 0, -1, 1, 1, 0, 0, -1, -1], np.int8)
    y = torch.tensor([[1.0, 1, -1, 1, 1, 1, -1, -1, -1]], dtype=torch.float64)
    fi, ei = (torch.from_numpy(a)[None] for a in features(crf.fs, colour, 1, size))
    edges_np = grid_edges(size)
    edges = torch.from_numpy(edges_np)

    def log_lik() -> float:
        h, w = crf.potentials(fi, ei)
        _, _, log_z = exact(h[0].detach().numpy(), edges_np, w[0].detach().numpy())
        return float(energy(h, w, y, edge_products(y, edges))[0].detach()) - log_z

    h, w = crf.potentials(fi, ei)
    mean, pair, _ = exact(h[0].detach().numpy(), edges_np, w[0].detach().numpy())
    surrogate = energy(h, w, y, edge_products(y, edges)) - energy(
        h, w, torch.tensor(mean)[None], torch.tensor(pair)[None]
    )
    surrogate.sum().backward()
    used_f = sorted(set(fi.reshape(-1).tolist()))
    used_c = sorted(set(ei.reshape(-1).tolist()))
    eps = 1e-6
    for param, used in ((crf.field, used_f), (crf.coupling, used_c)):
        for k in used:
            with torch.no_grad():
                param[k] += eps
            up = log_lik()
            with torch.no_grad():
                param[k] -= 2 * eps
            down = log_lik()
            with torch.no_grad():
                param[k] += eps
            assert param.grad[k].item() == pytest.approx((up - down) / (2 * eps), abs=1e-6)


def _sampled_data(true: TerritoryCRF, size: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    colour = rng.choice([-1, 0, 1], size=(n, size * size), p=[0.25, 0.5, 0.25]).astype(np.int8)
    to_move = rng.choice([-1, 1], size=n).astype(np.int8)
    owner = np.empty_like(colour)
    edges = geometry(size).edges
    for k in range(n):
        h, w = true.position_potentials(colour[k], int(to_move[k]), size)
        s = first_spins(h, k)
        run_chain(h, edges, w, s, 1, 30, chain_rng(seed, k), False)
        owner[k] = s * to_move[k]
    return colour, to_move, owner


@pytest.mark.parametrize(
    "method, engine, device",
    [
        ("pl", "auto", "cpu"),
        ("ml", "numba", "cpu"),
        ("ml", "torch", "cpu"),
        pytest.param("ml", "torch", "cuda", marks=pytest.mark.gpu),
    ],
)
def test_parameters_recovered_from_data_the_model_drew(method, engine, device):
    """PL, and ML with either engine of the sweeps (torch: the CUDA path), recover a known
    model's parameters from data it drew."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA")
    size = 5
    rng = np.random.default_rng(0)
    true = TerritoryCRF("stern")
    with torch.no_grad():
        true.field.copy_(torch.tensor(rng.normal(0, 0.4, 9)))
        true.coupling.copy_(torch.tensor(rng.normal(0.3, 0.3, 6)))
    colour, to_move, owner = _sampled_data(true, size, 2000, 1)
    crf = TerritoryCRF("stern")
    data = labelled_positions(crf, colour, to_move, owner, size)
    cfg = TerritoryConfig(features="stern", method=method, epochs=12, pl_epochs=2, batch_size=100,
                          lr=0.05, l2=0.0, sweeps=1, engine=engine)  # fmt: skip
    fit(crf, data, cfg, torch.device(device))
    assert np.abs(crf.field.detach().numpy() - true.field.detach().numpy()).max() < 0.2
    assert np.abs(crf.coupling.detach().numpy() - true.coupling.detach().numpy()).max() < 0.2


def test_independent_fields_recovered_and_answered_exactly():
    """method=independent leaves the couplings at zero and recovers the fields of a model
    without couplings from data it drew; its query is exact: tanh of the fields, the
    same as Swendsen-Wang sampling gives, with the score's variance summed."""
    size = 5
    rng = np.random.default_rng(3)
    true = TerritoryCRF("stern")
    with torch.no_grad():
        true.field.copy_(torch.tensor(rng.normal(0, 0.8, 9)))
    assert true.independent
    colour, to_move, owner = _sampled_data(true, size, 2000, 4)
    crf = TerritoryCRF("stern")
    with torch.no_grad():
        crf.coupling.fill_(0.0)
    data = labelled_positions(crf, colour, to_move, owner, size)
    cfg = TerritoryConfig(features="stern", method="independent", epochs=12, batch_size=100,
                          lr=0.05, l2=0.0)  # fmt: skip
    fit(crf, data, cfg, torch.device("cpu"))
    assert crf.independent
    assert np.abs(crf.field.detach().numpy() - true.field.detach().numpy()).max() < 0.15
    est = crf.estimate(colour[0], int(to_move[0]), size, komi=0.5)
    h, _ = crf.position_potentials(colour[0], int(to_move[0]), size)
    sign = float(to_move[0])
    assert est.sweeps == 0
    np.testing.assert_allclose(est.expected_owner.reshape(-1), sign * np.tanh(h), atol=1e-12)
    assert est.mean_score == pytest.approx(sign * np.tanh(h).sum() - 0.5)
    assert est.score_stdev == pytest.approx(np.sqrt((1 - np.tanh(h) ** 2).sum()))
    s = first_spins(h, 0)
    mean, _, _ = run_chain(h, geometry(size).edges, np.zeros(len(geometry(size).edges)), s,
                           5, 0, chain_rng(0, 0), False)  # fmt: skip
    np.testing.assert_allclose(mean, np.tanh(h), atol=1e-12)  # Rao-Blackwellized: exact too


def test_mc_features_count_the_playouts_of_the_canonical_position():
    """The mc sets' counts: within the playouts, the same for a position turned (the
    symmetry test checks the indices, colours swapped too), and they see the board: a
    living wall's side owns its stones in every playout."""
    size = 9
    fs = FEATURE_SETS["mc8"]
    points = np.zeros(size * size, np.int8)
    points[[r * size + 4 for r in range(size)]] = 1  # a black wall down the middle
    points[[r * size + 2 for r in range(size)]] = 1  # and another: two living halves
    points[[1 * size + 7, 2 * size + 6]] = -1  # white stones, so that no symmetry keeps it
    mine, theirs = mc_counts(points, size, fs.playouts)
    assert (mine + theirs <= fs.playouts).all()
    assert (mine[points == 1] == fs.playouts).all()  # black, the mover, keeps its walls
    flipped = points.reshape(size, size)[:, ::-1].reshape(-1).copy()
    mine2, theirs2 = mc_counts(flipped, size, fs.playouts)
    np.testing.assert_array_equal(mine2.reshape(size, size)[:, ::-1].reshape(-1), mine)
    np.testing.assert_array_equal(theirs2.reshape(size, size)[:, ::-1].reshape(-1), theirs)
    perms = board_symmetries(size)
    grid = np.arange(size * size).reshape(size, size)
    want = set()
    for k in range(4):
        for g in (np.rot90(grid, k), np.rot90(grid, k).T):
            inverse = np.empty(size * size, np.int64)
            inverse[g.reshape(-1)] = np.arange(size * size)
            want.add(tuple(inverse))
    assert {tuple(p) for p in perms} == want  # the 8 symmetries of the square


def _small_fit_data():
    size = 5
    true = TerritoryCRF("rich")
    with torch.no_grad():
        true.field.normal_(0, 0.3, generator=torch.Generator().manual_seed(0))
        true.coupling.fill_(0.4)
    colour, to_move, owner = _sampled_data(true, size, 300, 2)
    return colour, to_move, owner, size


def test_same_config_same_model_and_resume_continues_exactly(tmp_path):
    colour, to_move, owner, size = _small_fit_data()
    cfg = TerritoryConfig(method="ml", epochs=3, pl_epochs=1, batch_size=64, sweeps=1)

    def trained(checkpoint=None, stop_after=None):
        crf = TerritoryCRF("rich")
        data = labelled_positions(crf, colour, to_move, owner, size)

        def on_epoch(epoch, record):
            if epoch == stop_after:
                raise KeyboardInterrupt

        fit(crf, data, cfg, torch.device("cpu"), checkpoint, on_epoch=on_epoch)
        return crf

    a = trained()
    b = trained()
    torch.testing.assert_close(a.field, b.field, rtol=0, atol=0)
    resume = Resume(tmp_path / "state.pt", {"x": 1}, resume=True)
    with pytest.raises(KeyboardInterrupt):
        trained(resume, stop_after=2)
    c = trained(resume)
    torch.testing.assert_close(a.field, c.field, rtol=0, atol=0)
    torch.testing.assert_close(a.coupling, c.coupling, rtol=0, atol=0)


def test_pseudo_likelihood_matches_its_definition():
    size = 3
    edges_np = grid_edges(size)
    rng = np.random.default_rng(1)
    h = torch.tensor(rng.normal(0, 1, (1, 9)))
    w = torch.tensor(rng.normal(0, 1, (1, len(edges_np))))
    y = torch.tensor([[1.0, -1, 1, 0, 1, -1, -1, 1, 1]], dtype=torch.float64)
    got = pseudo_log_likelihood(h, w, y, torch.from_numpy(edges_np)).item()
    want = 0.0
    for i in range(9):
        if y[0, i] == 0:
            continue
        u = h[0, i].item()
        for e, (a, b) in enumerate(edges_np):
            if a == i:
                u += w[0, e].item() * y[0, b].item()
            elif b == i:
                u += w[0, e].item() * y[0, a].item()
        want += -np.log1p(np.exp(-2 * y[0, i].item() * u))
    assert got == pytest.approx(want, abs=1e-9)


def _transforms(size: int):
    """The 8 symmetries as maps of flat points."""
    r, c = np.divmod(np.arange(size * size), size)
    n = size - 1
    for rr, cc in ((r, c), (c, n - r), (n - r, n - c), (n - c, r)):
        yield rr * size + cc
        yield rr * size + (n - cc)


def sharp_policy() -> LightGammas:
    """A light policy far from uniform: captures and extensions strongly preferred,
    self-atari shunned, the 3x3 patterns' gammas spread over four orders of magnitude."""
    g = LightGammas.neutral()
    g.pattern[:] = np.exp(np.random.default_rng(0).uniform(-4.0, 4.0, g.pattern.shape))
    g.capture[1:] = 50.0
    g.extension[1:] = 20.0
    g.self_atari[1:] = 0.02
    return LightGammas(g.pattern, g.capture, g.extension, g.self_atari, g.contiguity, g.pass_)


def sharp_player():
    return pattern_player(build_tables(sharp_policy()))


@pytest.mark.parametrize("name", sorted(FEATURE_SETS))
def test_features_are_invariant_under_symmetries_and_colours(name):
    size = 7
    fs = FEATURE_SETS[name]
    player = sharp_player() if fs.policy else None
    rng = np.random.default_rng(4)
    colour = rng.choice([-1, 0, 1], size=size * size, p=[0.3, 0.4, 0.3]).astype(np.int8)
    fi, ei = features(fs, colour, 1, size, player)
    edges = grid_edges(size)
    edge_key = {tuple(sorted(e)): k for k, e in enumerate(edges.tolist())}
    for perm in _transforms(size):
        moved = np.empty_like(colour)
        moved[perm] = colour
        fi2, ei2 = features(fs, moved, 1, size, player)
        # a point's columns are a multiset (h sums them): compare them sorted
        np.testing.assert_array_equal(np.sort(fi2[perm], axis=1), np.sort(fi, axis=1))
        for k, (a, b) in enumerate(edges):
            moved_e = ei2[edge_key[tuple(sorted((perm[a], perm[b])))]]
            np.testing.assert_array_equal(np.sort(moved_e), np.sort(ei[k]))
    fi3, ei3 = features(fs, -colour, -1, size, player)  # colours swapped, other side to move
    np.testing.assert_array_equal(fi3, fi)
    np.testing.assert_array_equal(ei3, ei)
    assert fi.min() >= 0 and fi.max() < fs.n_field and ei.min() >= 0 and ei.max() < fs.n_coupling


@pytest.mark.parametrize("name", sorted(FEATURE_SETS))
def test_the_fields_alone_are_the_fields_of_the_full_features(name):
    """couplings=False (a model without couplings) leaves the pairs out and changes no
    field column."""
    size = 9
    fs = FEATURE_SETS[name]
    player = sharp_player() if fs.policy else None
    rng = np.random.default_rng(11)
    for _ in range(3):
        colour = signed_points(board_from_points(
            rng.choice([-1, 0, 1], size=size * size, p=[0.3, 0.4, 0.3]).astype(np.int8),
            size, BLACK))  # fmt: skip
        fi, _ = features(fs, colour, -1, size, player)
        fi2, ei2 = features(fs, colour, -1, size, player, couplings=False)
        np.testing.assert_array_equal(fi2, fi)
        assert ei2.shape == (0, fs.edge_cols)


def test_strings_and_liberties_match_the_board():
    size = 9
    rng = np.random.default_rng(8)
    points = rng.choice([-1, 0, 1], size=size * size, p=[0.2, 0.6, 0.2]).astype(np.int8)
    board = board_from_points(points, size, BLACK)
    points = signed_points(board)  # stones without liberties were captured on placing
    geo = geometry(size)
    cid, csize, clibs, _ = components(points, geo.nbr)
    sid, libs, stones = string_view(points, cid, csize, clibs)
    w = size + 2
    for i in np.flatnonzero(points):
        loc = (i // size + 1) * w + i % size + 1
        head = board.head[loc]
        assert libs[i] == board.libs[head]
        assert stones[i] == board.nstones[head]


def test_components_match_a_reference_flood_fill():
    """components: every point's component of equal value, its size, a string's
    liberties and a region's border colours, against a plain breadth-first search."""
    size = 9
    rng = np.random.default_rng(9)
    geo = geometry(size)
    for _ in range(20):
        rel = rng.choice([-1, 0, 1], size=size * size, p=[0.3, 0.4, 0.3]).astype(np.int8)
        cid, csize, clibs, border = components(rel, geo.nbr)
        for i in range(size * size):
            seen, todo = {i}, [i]
            while todo:
                p = todo.pop()
                for q in geo.nbr[p]:
                    if q >= 0 and rel[q] == rel[i] and q not in seen:
                        seen.add(q)
                        todo.append(q)
            around = {int(q) for p in seen for q in geo.nbr[p] if q >= 0 and q not in seen}
            assert cid[i] == min(seen) and csize[cid[i]] == len(seen)
            assert clibs[cid[i]] == sum(rel[q] == 0 for q in around) * (rel[i] != 0)
            bits = (1 if any(rel[q] > 0 for q in around) else 0) | (
                2 if any(rel[q] < 0 for q in around) else 0
            )
            assert border[cid[i]] == bits


def test_predict_on_a_board_and_save_load(tmp_path):
    crf = TerritoryCRF("stern")
    with torch.no_grad():  # the mover's stones own their surroundings, the opponent's theirs
        crf.field.copy_(torch.tensor([0, 0, 0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0]))
        crf.coupling.fill_(0.5)
    size = 9
    points = np.zeros(size * size, np.int8)
    points[[i * size + 2 for i in range(size)]] = 1  # a black wall on column 3
    points[[i * size + 6 for i in range(size)]] = -1  # a white wall on column 7
    board = board_from_points(points, size, WHITE)
    est = crf.predict(board, WHITE, komi=0.0, sweeps=300)
    assert est.black[:, :2].mean() > 0.8 and est.black[:, 7:].mean() < 0.2
    assert est.mean_score == pytest.approx(est.expected_owner.sum(), abs=1e-9)
    path = crf.save(tmp_path / "crf.pt", {"note": "test"})
    back = TerritoryCRF.load(path)
    assert back.meta["note"] == "test" and back.features == "stern"
    torch.testing.assert_close(back.field, crf.field)
    np.testing.assert_allclose(back.predict(board, WHITE, 0.0, sweeps=300).black, est.black)
    (tmp_path / "bad.pt").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a territory model"):
        TerritoryCRF.load(tmp_path / "bad.pt")


def test_pmc_features_read_the_policy_playouts_and_the_model_carries_the_policy(tmp_path):
    """The pmc sets count a pattern policy's playouts (not uniform ones: on the same
    position the counts differ), refuse to run without one, and a pmc model keeps its
    policy's gammas in crf.pt, so a loaded model reads the same playouts."""
    size = 9
    rng = np.random.default_rng(11)
    points = rng.choice([-1, 0, 1], size=size * size, p=[0.2, 0.6, 0.2]).astype(np.int8)
    fs = FEATURE_SETS["pmc8"]
    player = sharp_player()
    mine, theirs = mc_counts(points, size, fs.playouts, player)
    assert (mine + theirs <= fs.playouts).all()
    np.testing.assert_array_equal(mc_counts(points, size, fs.playouts, player)[0], mine)
    uniform = mc_counts(points, size, fs.playouts)
    assert (uniform[0] != mine).any() or (uniform[1] != theirs).any()
    with pytest.raises(ValueError, match="need a pattern policy"):
        features(fs, points, 1, size)
    with pytest.raises(ValueError, match="need a playout policy"):
        TerritoryCRF("pmc8")
    crf = TerritoryCRF("pmc8", sharp_policy())
    with torch.no_grad():
        crf.field.copy_(torch.from_numpy(np.random.default_rng(1).normal(0, 0.3, fs.n_field)))
    board = board_from_points(points, size, BLACK)
    est = crf.predict(board, BLACK, komi=0.0)
    assert est.sweeps == 0  # fields only: exact
    back = TerritoryCRF.load(crf.save(tmp_path / "crf.pt"))
    np.testing.assert_array_equal(back.policy.pattern, crf.policy.pattern)
    np.testing.assert_array_equal(back.predict(board, BLACK, komi=0.0).black, est.black)
    other = TerritoryCRF("pmc8", LightGammas.neutral())
    other.load_state_dict(crf.state_dict())
    assert not np.array_equal(other.predict(board, BLACK, komi=0.0).black, est.black)
    state = torch.load(tmp_path / "crf.pt", weights_only=True)
    del state["policy"]
    torch.save(state, tmp_path / "no_policy.pt")
    with pytest.raises(ValueError, match="no_policy.pt: .*need a playout policy"):
        TerritoryCRF.load(tmp_path / "no_policy.pt")


@pytest.mark.parametrize("independent", [True, False])
def test_a_query_potentials_equal_the_batched_ones(independent):
    """position_potentials (numba gather_sum, the couplings skipped when all are 0)
    gives the torch potentials of the same features."""
    size = 7
    crf = TerritoryCRF("rmc8")
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        crf.field.copy_(torch.randn(crf.field.shape, generator=gen))
        crf.coupling.copy_(torch.randn(crf.coupling.shape, generator=gen))
        if independent:
            crf.coupling.fill_(0.0)
    colour = np.random.default_rng(5).choice([-1, 0, 1], size=size * size).astype(np.int8)
    h, w = crf.position_potentials(colour, -1, size)
    fi, ei = features(crf.fs, colour, -1, size)
    with torch.no_grad():
        want_h, want_w = crf.potentials(torch.from_numpy(fi), torch.from_numpy(ei))
    assert h.dtype == np.float64 and h.shape == (size * size,) and w.shape == (ei.shape[0],)
    np.testing.assert_allclose(h, want_h.double().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w, want_w.double().numpy(), rtol=1e-5, atol=1e-5)
    assert (w == 0).all() == independent
