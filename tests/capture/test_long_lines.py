"""Over-long lines are read in bounded memory, their long strings cut with a marker, never loaded whole."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from capture_sessions import ClaudeSession

from habitus.capture import read_trace_file
from habitus.capture.common import LINE_LIMIT
from habitus.capture.longline import CHUNK_BYTES, STRING_CAP, shrink_long_line


def test_an_over_long_line_keeps_its_structure_with_the_long_output_cut(tmp_path: Path) -> None:
    big = "\n".join(f"row {i}: value" for i in range(LINE_LIMIT // 12))  # about 1.2 x LINE_LIMIT
    s = ClaudeSession()
    s.user("dump the table")
    s.bash("m1", "cat table.txt", big)
    s.user("and now the next step")
    path = s.write(tmp_path / "s.jsonl")
    result = read_trace_file(path)
    (trace,) = result.traces
    (call,) = trace.tool_calls
    assert call.input == {"command": "cat table.txt"} and call.output_truncated
    assert call.output.startswith("row 0: value\nrow 1: value")
    assert call.output_size >= len(big)  # the full size is still known
    assert [s.text for s in trace.steps if s.kind == "user"] == ["dump the table", "and now the next step"]
    assert result.offset == path.stat().st_size and result.unknown_types["<long line: strings cut>"] == 1


def _cut(line: bytes, first: int = 4096) -> bytes:
    """`line` through `shrink_long_line`, as if its first `first` bytes had been read before."""
    handle = io.BytesIO(line[first:])
    shrunk, consumed, complete = shrink_long_line(line[:first], handle, LINE_LIMIT)
    assert (consumed, complete) == (len(line), line.endswith(b"\n"))
    assert shrunk is not None
    return shrunk


@pytest.mark.parametrize("shift", range(6))
def test_a_cut_never_falls_inside_an_escape(shift: int) -> None:
    text = "x" * shift + "é" * (STRING_CAP // 3)  # é is written \u00e9 (6 bytes): the cut lands at each offset
    line = (json.dumps({"text": text, "after": 1}) + "\n").encode()
    value = json.loads(_cut(line))
    assert value["after"] == 1 and value["text"].startswith("x" * shift + "é" * 1000)
    escaped_size = len(json.dumps(text)) - 2
    assert value["text"].endswith(f"[... output truncated by habitus: {escaped_size} bytes in full ...]")
    assert len(value["text"]) < STRING_CAP // 6 + 100


@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_escaped_quotes_and_backslashes_across_chunk_ends_do_not_end_a_string(shift: int) -> None:
    text = 'a\\"""' * (CHUNK_BYTES // 2)  # backslashes and quotes, escaped, straddling every chunk end
    line = (json.dumps({"pad": "p" * shift, "text": text, "next": "kept", "n": 2}) + "\n").encode()
    assert len(line) > 3 * CHUNK_BYTES
    value = json.loads(_cut(line, first=CHUNK_BYTES - 1))
    assert (value["next"], value["n"]) == ("kept", 2)
    assert value["text"].startswith('a\\"""a\\"""') and len(value["text"].encode()) < STRING_CAP + 100


def test_a_line_too_long_even_when_cut_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    s = ClaudeSession()
    s.user("before")
    s.write(path)
    with path.open("a") as out:
        out.write(json.dumps({"type": "user", "numbers": list(range(LINE_LIMIT // 4))}) + "\n")
    after = ClaudeSession()
    after.user("after")
    with path.open("a") as out:
        out.write(json.dumps(after.lines[0]) + "\n")
    result = read_trace_file(path)
    assert [s.text for s in result.traces[0].steps] == ["before", "after"]
    assert result.unknown_types["<line too long>"] == 1 and result.offset == path.stat().st_size


_PEAK = """
import resource, sys
from habitus.capture.ingest import ingest_paths
from habitus.store import open_store
def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
with open_store(sys.argv[2]) as store:
    ingest_paths([sys.argv[3]], store)  # warm up: every module loaded, the store open
    before = rss_mb()
    report = ingest_paths([sys.argv[1]], store)
    print(report.traces, round(rss_mb() - before))
"""


def test_a_64_mb_line_costs_little_memory(tmp_path: Path) -> None:
    small = ClaudeSession(session_id="warm")
    small.user("warm up")
    warm = small.write(tmp_path / "warm.jsonl")
    s = ClaudeSession()
    s.user("dump")
    path = s.write(tmp_path / "big.jsonl")
    with path.open("a") as out:
        line = {"type": "user", "sessionId": "sess-1", "uuid": "b", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "x", "content": "y" * (64 << 20)}]}}
        out.write(json.dumps(line) + "\n")
    done = subprocess.run([sys.executable, "-c", _PEAK, str(path), str(tmp_path / "h.db"), str(warm)],
                          capture_output=True, text=True, timeout=300, check=True)
    traces, growth_mb = map(int, done.stdout.split())
    assert traces == 1 and growth_mb < 40, done.stdout
