"""Game packs (gomove.reading.pack): games parsed once, read back as they were.

- every kept game of the fixtures (19x19 and 9x9, handicap and setup stones, passes,
  ko) comes back from a pack equal to the one parsed from its SGF, in order;
- a dataset extracted from a pack holds the same records as one from the SGF files;
- a file that is not a pack is one counted "read" skip (an error with strict);
- ``gomove data --pack`` writes the games it keeps and refuses a name without the suffix.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gomove.cli import data as data_cli
from gomove.data.dataset import build_dataset
from gomove.data.extractor import FeatureExtractor
from gomove.features.config import FeatureConfig
from gomove.reading.games import ReadConfig, ReadStats, iter_games
from gomove.reading.pack import PACK_SUFFIX, write_pack
from gomove.reading.sgf import GameError

FIXTURES = Path(__file__).parent / "fixtures"
KEEP = ReadConfig(sizes=(9, 19), superko=False)  # what the fixtures hold of good games


def test_pack_round_trip_equals_the_sgf_games(tmp_path):
    games = list(iter_games(FIXTURES, KEEP))
    assert {g.size for g in games} == {9, 19} and any(g.setup for g in games)
    assert any(m is None for g in games for _, m in g.moves)  # a pass
    path = tmp_path / f"f{PACK_SUFFIX}"
    assert write_pack(games, path) == len(games)
    stats = ReadStats()
    again = list(iter_games(path, KEEP, stats))
    assert again == games
    assert stats.games == stats.files == len(games) and not stats.skipped


def test_dataset_from_a_pack_equals_the_sgf_one(games, tmp_path):
    train, _ = games
    pack = tmp_path / f"train{PACK_SUFFIX}"
    write_pack(iter_games(train, ReadConfig(sizes=(9,))), pack)
    ex = FeatureExtractor(FeatureConfig(shapes=False))
    built = [
        build_dataset(
            src,
            ReadConfig(sizes=(9,)),
            ex,
            tmp_path / name,
            workers=1,
            shard_games=3,
            progress=False,
        )  # fmt: skip
        for src, name in ((train, "a"), (pack, "b"))
    ]
    a, b = (d.path for d in built)
    assert built[0].n_positions == built[1].n_positions > 0
    for name in ("records.bin", "combos.bin", "n_cand.bin", "winner.bin", "game.bin", "move.bin"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_a_damaged_pack_is_a_counted_skip(tmp_path):
    bad = tmp_path / f"bad{PACK_SUFFIX}"
    bad.write_bytes(b"not a zip at all")
    stats = ReadStats()
    assert list(iter_games(bad, KEEP, stats)) == []
    assert stats.skipped == {"read": 1} and "not a game pack" in stats.errors[0]
    with pytest.raises(GameError, match="not a game pack"):
        list(iter_games(bad, ReadConfig(strict=True)))
    other = tmp_path / f"other{PACK_SUFFIX}"
    np.savez(other, format=np.array("something-else"), version=np.array(1))
    assert list(iter_games(other, KEEP, stats)) == [] and stats.skipped["read"] == 2


def test_cli_writes_the_games_it_keeps(tmp_path, capsys):
    out = tmp_path / f"g{PACK_SUFFIX}"
    assert data_cli.main([str(FIXTURES / "game9.sgf"), str(FIXTURES / "game19.sgf"),
                          "--sizes", "19", "--pack", str(out)]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == 1 and summary["skipped"] == {"size": 1}
    (game,) = iter_games(out)
    assert game.size == 19 and game.source.endswith("game19.sgf")
    with pytest.raises(SystemExit):
        data_cli.main([str(FIXTURES / "game9.sgf"), "--pack", str(tmp_path / "g.npz")])
