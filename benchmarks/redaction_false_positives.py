"""False-positive check of secret redaction on real sessions: how many redactions, of what kind, and where.

Reads every trace file under the given folders with the format readers (unredacted), scans each text
the way ingest does (every text field, each string of a tool input, a tool's output with its input as
context) and reports redactions per kind with a masked sample of each: the words before the
redaction and the *shape* of what was removed (length and character classes), never the removed
text. The real corpus was scanned by its collector and holds no real secret, so every redaction
there is a false positive (or a test fixture's made-up password) — read the samples.

    .venv/bin/python benchmarks/redaction_false_positives.py ../shared/corpus /tmp/git-sync-sessions [--json]

(The real-history sessions are in `../shared/corpus/real-history/<repo>/checkpoints.tar.xz`; extract one
to a temporary folder first, never into the project. `tests/capture/test_secret_false_positives.py`
runs the same check on all three real histories.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from habitus.capture.chat import read_chat
from habitus.capture.claude import read_claude
from habitus.capture.codex import read_codex
from habitus.capture.reader import detect_format, iter_trace_files
from habitus.capture.redact import scanned_texts
from habitus.capture.secret_scan import find_secrets
from habitus.capture.spans import read_spans, read_transcript

READERS = {"claude": read_claude, "codex": read_codex, "spans": read_spans, "chat": read_chat,
           "transcript": read_transcript}


def _shape(removed: str) -> str:
    classes = "".join(sorted({"a" if c.islower() else "A" if c.isupper() else "9" if c.isdigit() else "·"
                              for c in removed}))
    return f"{len(removed)} chars [{classes}]"


def scan(paths: list[Path]) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    samples: dict[str, list[str]] = {}
    files = traces = texts = chars = 0
    started = time.perf_counter()
    for path in iter_trace_files(paths):
        fmt = detect_format(path)
        if fmt not in READERS:
            continue
        files += 1
        for trace in READERS[fmt](path).traces:
            traces += 1
            for text, context in scanned_texts(trace):
                texts += 1
                chars += len(text)
                for finding in find_secrets(text, context=context):
                    kinds[finding.kind] += 1
                    before = " ".join(text[max(0, finding.start - 40):finding.start].split())
                    sample = f"…{before} [{finding.kind}: {_shape(text[finding.start:finding.end])}]"
                    samples.setdefault(finding.kind, [])
                    if len(samples[finding.kind]) < 5:
                        samples[finding.kind].append(sample)
    return {"files": files, "traces": traces, "texts": texts, "chars": chars, "redactions": sum(kinds.values()),
            "by_kind": dict(kinds.most_common()), "samples": samples,
            "seconds": round(time.perf_counter() - started, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = scan(args.paths)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"{result['files']} files, {result['traces']} traces, {result['texts']:,} texts, "
          f"{result['chars'] / 1e6:.1f} M characters: {result['redactions']} redactions in {result['seconds']} s")
    for kind, count in result["by_kind"].items():
        print(f"  {kind}: {count}")
        for sample in result["samples"][kind]:
            print(f"      {sample}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
