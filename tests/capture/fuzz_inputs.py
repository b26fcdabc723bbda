"""Damaged inputs for every trace reader, and a harness that feeds them to the readers and the store.

Seeds are small, valid files of each format (Claude Code session and subagent file, Codex rollout in
both generations, SkillRefiner spans with a rewards file, chat JSONL, OTel as an OTLP document, span
lines and console spans, a plain-text transcript). Each seed is damaged in the ways real files get
damaged or an adversary damages them: cut at any byte, invalid UTF-8, NUL bytes, huge lines and
strings, deep nesting, wrong JSON types in every field (including `1e400`, `NaN`, integers past 2^63,
lone `\\ud800` escapes, JSON text nested inside strings), unknown or non-object lines, dropped keys,
duplicated and reordered lines. Everything is derived from one `random.Random(seed)`, so a run is
reproducible.

`run_readers` reads every damaged input with format detection and with the seed's format forced,
stores what was read in a real SQLite store, and records every exception that escapes (a crash, with
its innermost habitus frame as the site) and every read that does not finish in time (a hang).

Also runnable as a script against any checkout (`PYTHONPATH=<src>:tests/capture python
tests/capture/fuzz_inputs.py`), which is how the figures for the code before the fix were taken.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capture_sessions import ClaudeSession, codex_lines

# Raw JSON literals put in place of a field's value. Some are not valid JSON (NaN, Infinity) but
# Python's json accepts them, as do many writers.
BAD_VALUES: tuple[str, ...] = (
    "null", "true", "false", "0", "-1", "1.5", "1e400", "-1e400", "NaN", "Infinity", "9223372036854775808",
    "18446744073709551616", "-9223372036854775809", "1" + "0" * 40, '""', '"\\ud800"', '"a\\udfffb"',
    '"\\u0000"', '"x\\u0000y"', "[]", '[1, "a", null]', "{}", '{"a": {"b": [1, {"c": null}]}}',
    '"' + "A" * 3000 + '"', "[" * 40 + "]" * 40, '"' + "[" * 50_000 + '"', '"1e400"', '"{\\"a\\": 1e400}"',
    '"' + "{\\\"a\\\":" * 3000 + '"', '["x", {"type": "text"}]', '{"type": "tool_use"}', '"\\ud83d\\ude00"',
)
UNKNOWN_LINES: tuple[str, ...] = (
    '{"type": "zzz-new-kind", "payload": {"x": 1}}', '{"type": 7}', '{"type": ["user"]}', "[]", "1", '"text"',
    "null", "{}", '{"type": "response_item", "payload": 3}', '{"type": "user", "message": "not a dict"}',
    '{"type": "assistant", "message": {"content": 5}}', '{"type": "event_msg", "payload": {"type": null}}',
)
INGEST_EVERY = 25  # the ingest phase takes every 25th damaged input (each is ingested three times)
INVALID_UTF8: tuple[bytes, ...] = (b"\xff", b"\xfe\xfe", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xf4\x90\x80\x80",
                                   b"\xc0\xaf")


@dataclass
class Damaged:
    """One damaged input: a file (and its siblings) plus the format its seed was written in."""

    name: str
    fmt: str
    filename: str
    data: bytes
    siblings: dict[str, bytes] = field(default_factory=dict)
    fifo: bool = False  # put a named pipe (with no writer) where the file would be

    def write(self, folder: Path) -> Path:
        path = folder / self.filename
        if self.fifo:
            os.mkfifo(path)
        else:
            path.write_bytes(self.data)
        for name, data in self.siblings.items():
            (folder / name).write_bytes(data)
        return path


@dataclass
class Seed:
    name: str
    fmt: str
    filename: str
    data: bytes
    siblings: dict[str, bytes] = field(default_factory=dict)


def _jsonl(lines: list[Any]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def seeds() -> list[Seed]:
    """One small valid file per format and shape."""
    out: list[Seed] = []
    s = ClaudeSession(session_id="fz-claude")
    s.user("fix the failing test in calc.py")
    s.assistant("m1", [{"type": "thinking", "thinking": "look first"}, {"type": "text", "text": "Reading."}])
    s.tool("m2", "Read", {"file_path": "/work/repo/calc.py"}, "def add(a, b): return a - b")
    s.tool("m3", "Edit", {"file_path": "/work/repo/calc.py", "old_string": "-", "new_string": "+"}, "ok")
    s.bash("m4", "cat > notes.md << 'EOF'\nread me\nEOF\npytest -q", "1 passed", 0)
    s.tool("m5", "Task", {"prompt": "check docs"}, "done", side={"agentId": "ag1", "status": "completed"})
    s.raw({"parentUuid": "u9", "isSidechain": True, "agentId": "ag1", "type": "assistant", "uuid": "s1",
           "sessionId": "fz-claude", "timestamp": "2026-01-01T00:01:00.000Z",
           "message": {"id": "m6", "role": "assistant", "content": [{"type": "text", "text": "sub work"}],
                       "usage": {"input_tokens": 1, "output_tokens": 1}}})
    s.raw({"type": "summary", "summary": "Fixed calc", "leafUuid": "u9"})
    s.raw({"type": "system", "content": "Compacted", "subtype": "compact", "timestamp": "2026-01-01T00:02:00Z",
           "uuid": "u99", "sessionId": "fz-claude"})
    s.bash("m7", "npm test", "Exit code 1\n1 failed", 1)
    out.append(Seed("claude", "claude", "fz-claude.jsonl", _jsonl(s.lines)))
    sub = ClaudeSession(session_id="fz-claude")
    sub.user("check docs")
    sub.tool("m8", "Grep", {"pattern": "TODO"}, "a.py:1: TODO")
    out.append(Seed("claude-subagent", "claude", "agent-ag1.jsonl", _jsonl(sub.lines)))
    codex = codex_lines(calls=[("pytest -q", "1 passed", 0), ("ruff check .", "E501", 1)])
    codex.insert(3, {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": {
        "type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]}})
    codex.append({"timestamp": "2026-01-01T00:00:02Z", "type": "response_item", "payload": {
        "type": "custom_tool_call", "name": "apply_patch", "call_id": "cp1",
        "input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch"}})
    codex.append({"timestamp": "2026-01-01T00:00:03Z", "type": "response_item", "payload": {
        "type": "custom_tool_call_output", "call_id": "cp1", "output": "Exit code: 0\nDone"}})
    codex.append({"timestamp": "2026-01-01T00:00:04Z", "type": "response_item", "payload": {
        "type": "local_shell_call", "call_id": "ls1", "action": {"command": ["bash", "-lc", "ls"]}}})
    codex.append({"timestamp": "2026-01-01T00:00:05Z", "type": "compacted", "payload": {"message": "summary"}})
    out.append(Seed("codex", "codex", "rollout-2026-01-01T00-00-00-019a0000-0000-7000-8000-000000000001.jsonl",
                    _jsonl(codex)))
    old_codex = [{"id": "old-1", "instructions": "be brief", "timestamp": "2025-05-01T00:00:00Z"},
                 {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
                 {"type": "function_call", "name": "shell", "call_id": "c1",
                  "arguments": json.dumps({"command": ["ls"]})},
                 {"type": "function_call_output", "call_id": "c1", "output": {"content": "a.py", "success": True}},
                 {"record_type": "state"}]
    out.append(Seed("codex-old", "codex", "rollout-old.jsonl", _jsonl(old_codex)))
    transcript = ("USER: fix it\n---\nASSISTANT: [tool call] terminal({\"command\": \"pytest\"})\n---\n"
                  "TOOL: 1 passed [exit code 0]\n---\nASSISTANT: done")
    spans = [{"trace_id": f"fz-span-{i}", "agent": "sr", "model": "m", "spans": [
        {"span_id": f"s{i}", "name": "agent_rollout", "input_text": "solve", "output_text": transcript,
         "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:01:00Z"},
        {"span_id": f"t{i}", "name": "tool_call", "tool_name": "bash", "input_text": '{"command": "ls"}',
         "output_text": "a.py"}]} for i in range(3)]
    out.append(Seed("spans", "spans", "traces.jsonl", _jsonl(spans),
                    {"binary_rewards.json": json.dumps({"fz-span-0": True, "fz-span-1": False}).encode()}))
    chat = [{"id": f"fz-chat-{i}", "model": "gpt", "usage": {"prompt_tokens": 10, "completion_tokens": 2},
             "outcome": {"status": "success", "feedback": "ok"}, "metadata": {"k": i}, "cwd": "/work/repo",
             "messages": [{"role": "system", "content": "be terse"}, {"role": "user", "content": "run tests"},
                          {"role": "assistant", "content": None, "tool_calls": [
                              {"id": f"c{i}", "type": "function",
                               "function": {"name": "bash", "arguments": '{"command": "pytest"}'}}]},
                          {"role": "tool", "tool_call_id": f"c{i}", "content": "1 passed", "exit_code": 0},
                          {"role": "assistant", "content": [{"type": "text", "text": "green"}]}]}
            for i in range(3)]
    out.append(Seed("chat", "chat", "chat.jsonl", _jsonl(chat)))
    out.extend(_otel_seeds())
    out.append(Seed("transcript", "transcript", "raw_content.txt", transcript.encode()))
    return out


def _otel_seeds() -> list[Seed]:
    from test_otel import TRACE, agent_spans

    spans = agent_spans()
    base = {"context": {"trace_id": "0x" + TRACE, "span_id": "0x01"}, "kind": "SpanKind.CLIENT", "parent_id": None,
            "resource": {"attributes": {"service.name": "bot"}}}
    console = [
        dict(base, name="chat claude", start_time="2025-11-30T00:00:01.000000Z", end_time="2025-11-30T00:00:02Z",
             status={"status_code": "UNSET"},
             attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-sonnet-4",
                         "gen_ai.usage.input_tokens": 500, "gen_ai.usage.output_tokens": 20},
             events=[{"name": "gen_ai.user.message", "timestamp": "2025-11-30T00:00:01Z",
                      "attributes": {"content": "List the files"}},
                     {"name": "gen_ai.choice", "timestamp": "2025-11-30T00:00:02Z",
                      "attributes": {"message": json.dumps({"tool_calls": [
                          {"id": "tc1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]})}}]),
        dict(base, context={"trace_id": "0x" + TRACE, "span_id": "0x02"}, name="execute_tool ls",
             start_time="2025-11-30T00:00:03Z", end_time="2025-11-30T00:00:04Z",
             status={"status_code": "ERROR", "description": "permission denied"},
             attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ls",
                         "gen_ai.tool.call.id": "tc1"}, events=[]),
    ]
    document = {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "coder"}}]}, "scopeSpans": [{"spans": spans}]}]}
    return [
        Seed("otel-document", "otel", "export.json", json.dumps(document, indent=2).encode()),
        Seed("otel-lines", "otel", "spans.jsonl", _jsonl(spans)),
        Seed("otel-console", "otel", "console.json",
             "\n".join(json.dumps(span, indent=2) for span in console).encode()),
    ]


def _key_paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    if depth > 7:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _key_paths(item, (*prefix, key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value[:6]):
            yield (*prefix, index)
            yield from _key_paths(item, (*prefix, index), depth + 1)


_SENTINEL = "\u0001fuzz-sentinel\u0001"


def _replace_at(obj: Any, path: tuple[Any, ...], literal: str, indent: int | None) -> str:
    """`obj` as JSON text with the value at `path` replaced by a raw JSON literal."""
    copy = json.loads(json.dumps(obj))
    target = copy
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = _SENTINEL
    return json.dumps(copy, indent=indent).replace(json.dumps(_SENTINEL), literal)


def _json_units(seed: Seed) -> tuple[list[Any], str] | None:
    """The seed's JSON values (one per line, or the documents of a pretty-printed file) and how they are joined."""
    text = seed.data.decode()
    if seed.fmt == "transcript" or seed.filename.endswith(".md"):  # text formats: damaged as text only
        return None
    if seed.filename.endswith(".json"):  # pretty-printed documents, one after another
        decoder, pos, values = json.JSONDecoder(), 0, []
        while pos < len(text):
            while pos < len(text) and text[pos] in " \n":
                pos += 1
            if pos >= len(text):
                break
            value, pos = decoder.raw_decode(text, pos)
            values.append(value)
        return values, "pretty"
    return [json.loads(line) for line in text.splitlines() if line.strip()], "lines"


def damaged_inputs(seed_value: int = 20260301, *, type_variants: int = 499, huge_mb: int = 3,
                   seed_list: list[Seed] | None = None) -> list[Damaged]:
    """Every damaged input, deterministically from `seed_value` (5,089 with the defaults and `seeds()`)."""
    rng = random.Random(seed_value)
    out: list[Damaged] = [Damaged("fifo/named-pipe/0", "claude", "pipe.jsonl", b"", fifo=True)]
    for seed in seeds() if seed_list is None else seed_list:
        data = seed.data

        def add(kind: str, new: bytes, seed: Seed = seed) -> None:
            out.append(Damaged(f"{seed.name}/{kind}/{len(out)}", seed.fmt, seed.filename, new, seed.siblings))

        for cut in sorted({0, 1, len(data) - 1, *(rng.randrange(len(data)) for _ in range(14))}):
            add("truncated", data[:cut])
        for _ in range(8):
            at = rng.randrange(len(data))
            add("invalid-utf8", data[:at] + rng.choice(INVALID_UTF8) + data[at:])
        for _ in range(4):
            at = rng.randrange(len(data))
            add("nul", data[:at] + b"\x00" * rng.choice((1, 3, 200)) + data[at:])
        add("nul-only", b"\x00" * 4096)
        add("binary", bytes(rng.randrange(256) for _ in range(2048)))
        add("newlines-only", b"\n\r\n\n")
        add("no-final-newline", data.rstrip(b"\n"))
        add("crlf", data.replace(b"\n", b"\r\n"))
        add("huge-line", data + b'{"type": "user", "text": "' + b"x" * (huge_mb << 20) + b'"}\n')
        add("huge-garbage-line", b"\xfe" * (1 << 20) + b"\n" + data)
        add("deep-nesting", b"[" * 200_000 + b"\n" + data)
        add("deep-object", b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n" + data)
        units = _json_units(seed)
        if units is None:
            add("text-injection", data.replace(b"---", b"---\nTOOL: \x00\xff" + b"[" * 5000, 2))
            add("role-only", b"USER:\n---\nASSISTANT:\n---\nTOOL:\n---\n" * 50)
            continue
        values, joined = units
        indent = 2 if joined == "pretty" else None

        def render(items: list[str]) -> bytes:
            return ("\n".join(items) + "\n").encode("utf-8", "surrogatepass")

        texts = [json.dumps(v, indent=indent) for v in values]
        paths = [(i, p) for i, v in enumerate(values) for p in _key_paths(v)]
        for _ in range(type_variants):
            index, path = rng.choice(paths)
            literal = rng.choice(BAD_VALUES)
            changed = list(texts)
            changed[index] = _replace_at(values[index], path, literal, indent)
            add(f"wrong-type:{'.'.join(map(str, path))[:60]}={literal[:12]}", render(changed))
        for literal in UNKNOWN_LINES:
            changed = list(texts)
            changed.insert(rng.randrange(len(changed) + 1), literal)
            add("unknown-line", render(changed))
        for _ in range(6):
            index = rng.randrange(len(values))
            value = values[index]
            if isinstance(value, dict) and value:
                copy = dict(value)
                copy.pop(rng.choice(list(copy)))
                changed = list(texts)
                changed[index] = json.dumps(copy, indent=indent)
                add("dropped-key", render(changed))
        for _ in range(3):
            changed = list(texts)
            rng.shuffle(changed)
            add("reordered", render(changed))
            add("duplicated", render(texts + texts[: rng.randrange(1, len(texts) + 1)]))
    return out


# --- the harness -------------------------------------------------------------------------------------------


class Hang(Exception):
    """A read that did not finish within the time allowed."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise `Hang` in this (main) thread after `seconds` (interrupts a blocking open of a FIFO too)."""
    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"no result after {seconds}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def crash_site(exc: BaseException) -> str:
    """`module.py:line ExceptionType` of the innermost habitus frame of a traceback."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/habitus/" in f.filename]
    where = f"{frames[-1].filename.rsplit('/habitus/', 1)[-1]}:{frames[-1].lineno}" if frames else "?"
    return f"{where} {type(exc).__name__}"


@dataclass
class FuzzReport:
    inputs: int = 0
    reads: int = 0
    traces: int = 0
    crashes: int = 0  # reads that raised
    crashed_inputs: int = 0  # inputs with at least one read that raised
    hangs: int = 0
    sites: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    file_errors: int = 0  # reads that reported the file as unreadable (not a crash: reported and survived)
    error_kinds: Counter[str] = field(default_factory=Counter)  # what those reports said (first words)
    guarded_lines: Counter[str] = field(default_factory=Counter)  # lines a reader could not use, by reason
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "reads": self.reads, "traces_stored": self.traces, "crashes": self.crashes,
                "crashed_inputs": self.crashed_inputs,
                "distinct_crash_sites": sum(1 for site in self.sites if not site.startswith("hang ")),
                "hangs": self.hangs, "file_errors": self.file_errors,
                "error_kinds": dict(self.error_kinds.most_common()),
                "guarded_lines": dict(self.guarded_lines.most_common()),
                "sites": dict(self.sites.most_common()), "examples": self.examples, "seconds": round(self.seconds, 1)}


def run_readers(inputs: list[Damaged], workdir: Path, *, per_read_s: float = 10.0) -> FuzzReport:
    """Read every damaged input (detected and forced format) and store what was read; count what escaped."""
    from habitus.capture import read_trace_file
    from habitus.store import open_store

    report = FuzzReport(inputs=len(inputs))
    started = time.perf_counter()
    with open_store(workdir / "fuzz.db") as store:
        for item in inputs:
            folder = workdir / item.name.split("/")[0]  # one folder per seed: its siblings stay, the file changes
            folder.mkdir(exist_ok=True)
            path = item.write(folder)
            crashes_before = report.crashes
            for fmt in (None, item.fmt):
                report.reads += 1
                try:
                    with deadline(per_read_s):
                        result = read_trace_file(path, fmt=fmt)
                        report.file_errors += bool(result.errors and not result.traces)
                        report.error_kinds.update(" ".join(e["message"].split()[:3]) for e in result.errors)
                        report.guarded_lines.update({k: v for k, v in result.unknown_types.items()
                                                     if "<unreadable" in k})
                        for trace in result.traces:
                            store.put_trace(trace)
                            report.traces += 1
                except Hang:
                    report.hangs += fmt is None  # an input that hangs counts once, not once per read
                    report.sites[f"hang {item.name.split('/')[0]}/{item.name.split('/')[1]}"] += 1
                except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
                    report.crashes += 1
                    site = crash_site(exc)
                    report.sites[site] += 1
                    report.examples.setdefault(site, item.name)
            report.crashed_inputs += report.crashes > crashes_before
            path.unlink()
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class IngestFuzzReport:
    inputs: int = 0
    ingests: int = 0
    crashes: int = 0  # ingest_paths raised
    hangs: int = 0
    good_files_missed: int = 0  # a good file beside a damaged one that was not stored
    traces_lost: int = 0  # stored traces that went away or came back smaller, at least once
    errors_reported: int = 0  # files reported as unreadable (one line each; the run went on)
    sites: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "ingests": self.ingests, "crashes": self.crashes, "hangs": self.hangs,
                "good_files_missed": self.good_files_missed, "traces_lost": self.traces_lost,
                "errors_reported": self.errors_reported, "sites": dict(self.sites.most_common()),
                "seconds": round(self.seconds, 1)}


def run_ingest(inputs: list[Damaged], workdir: Path, *, per_ingest_s: float = 20.0) -> IngestFuzzReport:
    """Ingest each damaged input beside a good file, and in place of its seed's own stored file.

    After every ingest, the good file must be stored and no trace stored before may be missing or
    smaller (steps, tool results) than it was.
    """
    from habitus.capture.ingest import ingest_paths
    from habitus.store import open_store

    report = IngestFuzzReport(inputs=len(inputs))
    started = time.perf_counter()
    seed_files: dict[str, Path] = {}
    for seed in seeds():
        folder = workdir / "seeds" / seed.name
        folder.mkdir(parents=True)
        seed_files[seed.name] = Damaged(seed.name, seed.fmt, seed.filename, seed.data, seed.siblings).write(folder)
    with open_store(workdir / "ingest.db") as store:
        ingest_paths([workdir / "seeds"], store)
        high: dict[str, tuple[int, int]] = {}

        def extents() -> dict[str, tuple[int, int]]:
            """`reconcile.extent` of every stored trace, in one query."""
            rows = store.conn.execute(
                "SELECT t.id, t.n_steps, (SELECT count(*) FROM steps s WHERE s.trace_id = t.id "
                "AND s.output IS NOT NULL) FROM traces t")
            return {row[0]: (row[1], row[2]) for row in rows}

        lost: set[str] = set()

        def check() -> None:
            now = extents()
            for trace_id, size in high.items():
                if now.get(trace_id, (0, 0)) < size:
                    lost.add(trace_id)
            report.traces_lost = len(lost)
            for trace_id, size in now.items():
                high[trace_id] = max(high.get(trace_id, size), size)

        def ingest(paths: list[Path], label: str) -> None:
            report.ingests += 1
            try:
                with deadline(per_ingest_s):
                    done = ingest_paths(paths, store)
                report.errors_reported += len(done.errors)
            except Hang:
                report.hangs += 1
                report.sites[f"hang {label}"] += 1
            except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
                report.crashes += 1
                report.sites[crash_site(exc)] += 1

        check()
        for number, item in enumerate(inputs):
            label = "/".join(item.name.split("/")[:2])
            folder = workdir / f"ingest{number}"
            folder.mkdir()
            item.write(folder)
            good = ClaudeSession(session_id=f"good-{number}")
            good.user("a good file read after a damaged one")
            good.write(folder / "zz-good.jsonl")
            ingest([folder], label)
            report.good_files_missed += store.get_trace(f"good-{number}") is None
            check()
            seed_name = item.name.split("/")[0]
            target = seed_files.get(seed_name)
            if target is None or item.fifo:
                continue
            original = target.read_bytes()
            target.write_bytes(item.data)
            ingest([target], f"in place {label}")
            check()
            target.write_bytes(original)
            ingest([target], f"restored {label}")
            check()
    report.seconds = time.perf_counter() - started
    return report


def main() -> None:
    inputs = damaged_inputs()
    with tempfile.TemporaryDirectory() as tmp:
        report = run_readers(inputs, Path(tmp))
    print(json.dumps(report.to_dict(), indent=2))
    with tempfile.TemporaryDirectory() as tmp:
        ingest_report = run_ingest(inputs[::INGEST_EVERY], Path(tmp))
    print(json.dumps(ingest_report.to_dict(), indent=2))


if __name__ == "__main__":
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    main()
