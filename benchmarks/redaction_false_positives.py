"""False-positive check of secret redaction on real sessions: how many redactions, of what kind, and where.

Reads every trace file under the given folders with the format readers (unredacted), redacts each
text field the way ingest does, and reports redactions per kind with a masked sample of each: the
words before the redaction and the *shape* of what was removed (length and character classes),
never the removed text. The real corpus was scanned by its collector and holds no real secret, so
every redaction there is a false positive (or a test fixture's fake key) — read the samples.

    .venv/bin/python benchmarks/redaction_false_positives.py ../shared/corpus /tmp/context-evaluator-sessions [--json]

(The real-history sessions are in `../shared/corpus/real-history/context-evaluator/checkpoints.tar.xz`;
extract it to a temporary folder first, never into the project.)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from habitus.capture.chat import read_chat
from habitus.capture.claude import read_claude
from habitus.capture.codex import read_codex
from habitus.capture.reader import detect_format, iter_trace_files
from habitus.capture.redact import redact
from habitus.capture.spans import read_spans, read_transcript

READERS = {"claude": read_claude, "codex": read_codex, "spans": read_spans, "chat": read_chat,
           "transcript": read_transcript}
_MARKER = re.compile(r"\[REDACTED:([a-z_]+)\]")


def _shape(removed: str) -> str:
    classes = "".join(sorted({"a" if c.islower() else "A" if c.isupper() else "9" if c.isdigit() else "·"
                              for c in removed}))
    return f"{len(removed)} chars [{classes}]"


def _texts(trace: Any) -> list[str]:
    texts = [trace.task or ""]
    for step in trace.steps:
        texts.append(step.text or "")
        if step.tool is not None:
            texts.append(json.dumps(step.tool.input, ensure_ascii=False))
            texts.append(step.tool.output or "")
    return [t for t in texts if t]


def _removed(original: str, redacted: str, start: int) -> str:
    """The original text replaced by the marker at `start` of `redacted` (aligned on the text after it)."""
    end = redacted.index("]", start) + 1
    after = redacted[end:end + 12]
    stop = original.find(after, start) if after else len(original)
    return original[start:stop if stop != -1 else start]


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
            for text in _texts(trace):
                texts += 1
                chars += len(text)
                out, count = redact(text)
                if not count:
                    continue
                for match in _MARKER.finditer(out):
                    kinds[match.group(1)] += 1
                    before = " ".join(out[max(0, match.start() - 40):match.start()].split())
                    sample = f"…{before} [{match.group(1)}: {_shape(_removed(text, out, match.start()))}]"
                    samples.setdefault(match.group(1), [])
                    if len(samples[match.group(1)]) < 5:
                        samples[match.group(1)].append(sample)
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
