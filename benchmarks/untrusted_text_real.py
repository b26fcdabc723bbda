"""What the sanitiser meets in real sessions: hidden characters, escape sequences and look-alikes by field.

Reads every trace file under the given folders (any format habitus reads) and counts, per kind of text
(the task prompt, a shell command, a tool's output, an edit's new text), how many
`habitus.core.untrusted.hidden` flags and of what kind, with a short escaped sample of each; plus the
prompts that span several lines (a hand-over used to replay all of them; now their first line, quoted)
and the commands that carry a shell comment (learning drops it). A flag on a prompt, a command or an
edit is what quarantine would refuse as an instruction: on real sessions those are the false positives
to read.

    .venv/bin/python benchmarks/untrusted_text_real.py ../shared/corpus/claude_code ../shared/corpus/codex /tmp/rh

(The real-history sessions are in `../shared/corpus/real-history/<repo>/checkpoints.tar.xz`; extract them
to a temporary folder first, never into the project.)
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

from habitus.capture.reader import iter_trace_files, read_trace_file
from habitus.core.shell import without_comments
from habitus.core.untrusted import hidden

_CODE = re.compile(r"U\+([0-9A-F]+)")
_KIND = re.compile(r" for .*| \(.*")  # "terminal escape sequence (…)" → its kind


def _fields(trace: Any) -> list[tuple[str, str]]:
    out = [("prompt", trace.task or "")]
    for step in trace.steps:
        call = step.tool
        if call is None:
            continue
        inputs = call.input if isinstance(call.input, dict) else {}
        if isinstance(inputs.get("command"), str):
            out.append(("command", inputs["command"]))
        if call.output:
            out.append(("output", call.output))
        out += [("edit", v) for k in ("new_string", "content") if isinstance(v := inputs.get(k), str)]
    return [(name, text) for name, text in out if text]


def _sample(text: str, found: str) -> str:
    m = _CODE.search(found)
    at = text.find(chr(int(m.group(1), 16))) if m else text.find("\x1b")
    return ascii(text[max(0, at - 30):at + 20])


def scan(paths: list[Path]) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    flags: Counter[str] = Counter()
    samples: dict[str, str] = {}
    started = time.perf_counter()
    for path in iter_trace_files(paths):
        try:
            traces = read_trace_file(path, subjects=False).traces
        except (OSError, ValueError):
            counts["unreadable files"] += 1
            continue
        for trace in traces:
            counts["traces"] += 1
            for name, text in _fields(trace):
                counts[name] += 1
                found = hidden(text)
                if found:
                    key = f"{name}: {_KIND.sub('', found)}"
                    flags[key] += 1
                    samples.setdefault(key, _sample(text, found))
                if name == "prompt" and len([ln for ln in text.splitlines() if ln.strip()]) > 1:
                    counts["multi-line prompts"] += 1
                if name == "command" and "#" in text and without_comments(text) != text.strip():
                    counts["commands with a comment"] += 1
    return {"counts": dict(counts), "flags": dict(flags.most_common()), "samples": samples,
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = scan(args.paths)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(", ".join(f"{k}: {v:,}" for k, v in result["counts"].items()) + f" ({result['seconds']} s)")
    for key, n in result["flags"].items():
        print(f"  {n:5}  {key}   {result['samples'][key][:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
