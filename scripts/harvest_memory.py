"""The harvest's table and peak memory on a data config, counted whole or in shards:
what docs/logs/scale.md's "The harvest in shards" measures.

    python scripts/harvest_memory.py --parts /tmp/parts --cap 22000000          # in shards
    python scripts/harvest_memory.py --parts /tmp/parts --cap 1000000000000     # whole
    python scripts/harvest_memory.py --parts /tmp/parts --games 2000 data=tygem_large

The games are those of ``data.train`` (overrides after the options; default the large
split with all sizes at min_count 3); ``--parts`` keeps the hashed sightings, so a second
run on the same games reads them instead of replaying the games. Prints one JSON line:
the patterns kept, the wall seconds, the peak of the process's own memory sampled
(RssAnon) and the kernel's high-water mark (VmHWM, ru_maxrss: which also sees the dicts' growth
inside one compiled call); ``--save`` writes the table's hashes, radii and counts.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np
from omegaconf import OmegaConf

from gomove.data.dataset import default_workers, harvest_source
from gomove.data.harvest import harvest
from gomove.data.sources import paths, read_config
from gomove.features.config import FeatureConfig
from gomove.memory import AnonPeak, peak_rss_mb
from gomove.reading.games import ReadStats, iter_games
from gomove.train.trainers import compose_config

DEFAULT = ["data=tygem_large", "features.shapes=all", "features.min_count=3"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--parts", required=True, help="a folder for the hashed sightings")
    p.add_argument("--cap", type=int, default=None, help="features.harvest_max_patterns")
    p.add_argument("--games", type=int, default=None, help="the first N training games")
    p.add_argument("--save", help="an .npz for the table's hashes, radii and counts")
    p.add_argument("overrides", nargs="*", help=f"gomove train overrides (default {DEFAULT})")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    ov = [*(args.overrides or DEFAULT), f"data.max_games={args.games or 'null'}"]
    if args.cap is not None:
        ov.append(f"features.harvest_max_patterns={args.cap}")
    cfg = compose_config(ov)
    feat = FeatureConfig(**OmegaConf.to_container(cfg.features, resolve=True))
    feat.validate()
    read = read_config(cfg.data, cfg.data.max_games)
    _, hread = harvest_source(paths(cfg.data.train), read, feat, args.parts)
    games = iter_games(paths(cfg.data.train), hread, ReadStats())
    t0 = time.perf_counter()
    with AnonPeak() as peak:
        table = harvest(games, feat, workers=default_workers(), progress=True,
                        total=hread.max_games, parts=Path(args.parts))  # fmt: skip
    print(json.dumps({
        "cap": feat.harvest_max_patterns, "games": args.games, "patterns": len(table),
        "seconds": round(time.perf_counter() - t0, 1), "peak_anon_mb": peak.peak_mb,
        "vm_hwm_mb": peak_rss_mb(),
    }))  # fmt: skip
    if args.save:
        np.savez(args.save, hashes=table.hashes, radius=table.radius, count=table.count)


if __name__ == "__main__":
    main()
