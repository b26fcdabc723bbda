"""Scale the fixture's sessions up for benchmarks: many distinct traces from the generated ones.

Each variant is a generated session's trace with its task values renamed (`toggleGrid` →
`toggleGrid17`) and, for `modules > 1`, its files moved into one of several parallel modules
(`server/` → `server3/`), consistently through the task, tool inputs and outputs. Reads and
edits stay coherent, so records and places are computed exactly as for the originals, and the
modules give induction many groups to tell apart. Variants name no commit (they were never
committed), so nothing is looked up in the fixture repo's history for them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from habitus.bench.fixture import Fixture
from habitus.core.trace import Trace

_ROOTS = ("web/", "server/", "docs/", "tests/")


def scaled_traces(fx: Fixture, n: int, *, modules: int = 8) -> Iterator[Trace]:
    """`n` distinct traces made from the fixture's change sessions (see the module docstring)."""
    from habitus.capture import read_trace_file

    base = []
    for s in fx.sessions:
        if s.kind == "inspect":
            continue
        traces = read_trace_file(s.path).traces
        if traces:
            base.append((s, json.dumps(traces[0].to_dict(), ensure_ascii=False)))
    if not base:
        raise ValueError("the fixture has no change sessions to scale")
    for i in range(n):
        session, text = base[i % len(base)]
        copy = i // len(base) + 1
        module = i % modules if modules > 1 else None
        if session.commit:  # a variant is not that commit: leave no commit to look up in the repo
            text = text.replace(f"[main {session.commit[:7]}]", "[main]")
        for value in sorted(session.values.values(), key=len, reverse=True):
            if len(value) >= 4 and "+" not in value and not value.replace(".", "").isdigit():
                text = text.replace(value, f"{value}{copy}")
        if module is not None:
            for root in _ROOTS:
                moved = f"{root[:-1]}{module}/"
                for before in ("/", '"', " ", "\\n"):
                    text = text.replace(before + root, before + moved)
        data = json.loads(text)
        data["id"] = f"{data['id']}-v{i}"
        data["session_id"] = f"{data.get('session_id')}-v{i}"
        yield Trace.from_dict(data)
