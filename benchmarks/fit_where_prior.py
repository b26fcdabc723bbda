"""Fit the where-to-look prior habitus ships (`src/habitus/data/where_prior.json`) on every real history at hand.

    python benchmarks/fit_where_prior.py --datasets ../shared/corpus/real-history [--out FILE] [--strength 3]

Each history's *history part* (the first 60% of its sessions, as `habitus bench replay` splits it) gives
its prequential rows; `habitus.learn.prior_fit.fit_prior` fits the model on all of them and chooses the
thresholds the way a new repository would meet them (each history scored with a prior fitted on the
others). Nothing of any history's replayed part is used, so `habitus bench replay --datasets` with
`--prior shipped` replays tasks this prior never saw; the held-out figures to report are still the
leave-one-repository-out ones (`--prior leave-one-out`, the default), since every repository's history
part went into this prior. Run it again whenever a feature of `habitus.recall.where` or a history changes,
and put the new figures in docs/bench-replay.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

from habitus.bench.replay.datasets import prepared_histories  # noqa: E402
from habitus.learn.prior import DEFAULT_STRENGTH, PRIOR_FILE, write_prior  # noqa: E402
from habitus.learn.prior_fit import RepoRows, fit_prior  # noqa: E402
from habitus.recall.where import is_named  # noqa: E402


def naming_evidence(repos: list[RepoRows]) -> dict[str, str]:
    """How often a candidate the task names (by kind of mention) was a file the task changed: why only a file
    named in prose is always handed (`habitus.recall.where.is_named`)."""
    kinds = {
        "named in prose": is_named,
        "named only in code or a plan's context": lambda f: bool(f.get("named")) and not is_named(f),
        "defines a named symbol, not named itself": lambda f: bool(f.get("defines")) and not f.get("named"),
    }
    rows = [r for repo in repos for r in repo.rows]
    out = {}
    for kind, test in kinds.items():
        chosen = [r for r in rows if test(r.features)]
        out[kind] = f"{sum(r.label for r in chosen)} of {len(chosen)}"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, required=True, help="folder of shipped histories")
    parser.add_argument("--out", type=Path, default=SRC / "habitus" / "data" / PRIOR_FILE)
    parser.add_argument("--strength", type=float, default=DEFAULT_STRENGTH,
                        help="L2 pull of a repo's own fit towards the prior")
    args = parser.parse_args()
    with prepared_histories(args.datasets, selectors=["none"],
                            progress=lambda m: print(m, file=sys.stderr)) as histories:
        repos = [h.rows for h in histories]
        prior = fit_prior(repos, strength=args.strength)
    write_prior(prior, args.out)
    print(json.dumps({"out": str(args.out), "thresholds": prior.thresholds, "source": prior.source,
                      "right when the task names the file": naming_evidence(repos)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
