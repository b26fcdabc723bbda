"""A seeded, sharded corpus of synthetic span traces for fleet-scale runs (`benchmarks/bench_fleet.py`, tests).

Shard `k` is the folder `shard-<k>/` holding `traces.jsonl` (span JSONL lines from
`habitus.refine.samples.build_corpus`, seed `seed + k`, trace ids prefixed `s<k>-` so they are
unique across shards) and its own `binary_rewards.json`, the layout a fleet export writes per
worker or per hour. Every `secret_every`-th trace carries a planted API key in a command output
(redaction must remove it before the store sees it). The traces are synthetic.
"""

from __future__ import annotations

import json
from pathlib import Path

from habitus.refine.samples import SEED, SEED_SKILL, build_corpus

PLANTED_SECRET = "sk-proj-" + "Fl33tScal3Plant3dK3y0123456789abcd"


def write_sharded_corpus(out_dir: Path | str, n_traces: int, shard_size: int = 1000, seed: int = SEED,
                         secret_every: int = 500) -> dict[str, object]:
    """Write `n_traces` span traces in shards of `shard_size` (>= 16) under `out_dir`; returns what was written."""
    if shard_size < 16:
        raise ValueError("a shard needs at least 16 traces")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written, shards, secrets, size = 0, 0, 0, 0
    while written < n_traces:
        count = min(shard_size, n_traces - written)
        rows, rewards = build_corpus(max(count, 16), seed + shards)
        rows = rows[:count]
        folder = out / f"shard-{shards:05d}"
        folder.mkdir(exist_ok=True)
        lines, kept = [], {}
        for row in rows:
            old = row["trace_id"]
            new = f"s{shards:05d}-{old}"
            row["trace_id"] = new
            kept[new] = rewards[old]
            if (written + len(lines)) % secret_every == 0:
                span = row["spans"][0]
                span["output_text"] = span["output_text"].replace(
                    "TOOL: ", f"TOOL: OPENAI_API_KEY={PLANTED_SECRET}\n", 1)
                secrets += 1
            lines.append(json.dumps(row, ensure_ascii=False) + "\n")
        data = "".join(lines).encode("utf-8")
        (folder / "traces.jsonl").write_bytes(data)
        (folder / "binary_rewards.json").write_text(json.dumps(kept) + "\n", encoding="utf-8")
        size += len(data)
        written += count
        shards += 1
    (out / "SKILL.md").write_text(SEED_SKILL, encoding="utf-8")
    return {"traces": written, "shards": shards, "secrets": secrets, "bytes": size, "root": out}


__all__ = ["PLANTED_SECRET", "write_sharded_corpus"]
