"""Ingest never loses stored data and never stops on one bad line or file (issue 12: findings 1, 12, 13)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from capture_sessions import ClaudeSession, write_jsonl
from typer.testing import CliRunner

from backends import open_store
from habitus.capture import read_trace_file
from habitus.capture.ingest import ingest_paths
from habitus.cli.main import app


@pytest.fixture(autouse=True)
def _both_stores(store_backend: str) -> str:
    """Ingest's no-loss guarantees hold on both stores (SQLite and a real PostgreSQL; tests/backends.py)."""
    return store_backend


def _long_session(path: Path, session_id: str = "sess-long", calls: int = 16) -> Path:
    """A session of 2 + 2 * calls steps (34 by default), each tool output about 1.2 KB: 20 KB hold a third of it."""
    s = ClaudeSession(session_id=session_id)
    s.user("wingman.lock and wingman-state.json should be ignored by git")
    for n in range(calls):
        s.assistant(f"t{n}", [{"type": "text", "text": f"step {n}: looking at the next file"}])
        s.bash(f"b{n}", f"cat src/file_{n}.py", "\n".join(f"line {i} of file {n}" for i in range(60)))
    s.assistant("end", [{"type": "text", "text": "done"}])
    return s.write(path)


def _steps(store, trace_id: str) -> int:  # noqa: ANN001 - any Store
    return len(store.get_trace(trace_id).steps)


def test_a_shorter_copy_of_a_stored_session_never_replaces_it(tmp_path: Path) -> None:
    original = _long_session(tmp_path / "s" / "session.jsonl")
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(original.read_bytes()[:20_000])  # the first 20 KB, cut inside a line
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([original], store)
        full = _steps(store, "sess-long")
        assert full == 34 and len(read_trace_file(partial).traces[0].steps) < full
        report = ingest_paths([partial], store)
        assert (report.traces, report.traces_kept_longer) == (0, 1)
        assert _steps(store, "sess-long") == full
        again = ingest_paths([original], store)
        assert (again.files_unchanged, _steps(store, "sess-long")) == (1, full)
        assert store.get_trace("sess-long").source_path == str(original.resolve())


def test_the_shorter_copy_read_first_grows_into_the_full_session(tmp_path: Path) -> None:
    original = _long_session(tmp_path / "s" / "session.jsonl")
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(original.read_bytes()[:20_000])
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([partial], store)
        report = ingest_paths([original], store)
        assert (report.traces, report.traces_renamed, store.count_traces()) == (1, 0, 1)
        assert store.get_trace("sess-long").to_dict() == {
            **read_trace_file(original).traces[0].to_dict(), "source_path": str(original.resolve())}


def test_a_source_truncated_in_place_keeps_its_stored_trace_and_grows_again_cleanly(tmp_path: Path) -> None:
    path = _long_session(tmp_path / "session.jsonl", calls=60)
    data = path.read_bytes()
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([path], store)
        before = store.get_trace("sess-long").to_dict()
        assert len(before["steps"]) == 122
        path.write_bytes(b"".join(data.splitlines(keepends=True)[:13]))
        cut = ingest_paths([path], store)
        assert (cut.traces_kept_longer, store.get_trace("sess-long").to_dict()) == (1, before)
        grown = ClaudeSession(session_id="sess-long")
        grown.user("one more thing")
        path.write_bytes(data + grown.write(tmp_path / "tail.jsonl").read_bytes())
        ingest_paths([path], store)
        expected = read_trace_file(path).traces[0]
        assert len(store.get_trace("sess-long").steps) == len(expected.steps) == 123


def test_a_file_changed_under_the_same_size_and_mtime_is_read_again(tmp_path: Path) -> None:
    path = _long_session(tmp_path / "session.jsonl", calls=2)
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([path], store)
        info = path.stat()
        path.write_bytes(path.read_bytes().replace(b"file_1.py", b"file_9.py"))
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
        assert (path.stat().st_size, path.stat().st_mtime) == (info.st_size, info.st_mtime)
        report = ingest_paths([path], store)
        assert (report.files, report.traces) == (1, 1)
        commands = [c.input["command"] for c in store.get_trace("sess-long").tool_calls]
        assert commands == ["cat src/file_0.py", "cat src/file_9.py"]


def test_a_file_state_from_before_content_hashes_is_upgraded_without_reading_the_file(tmp_path: Path) -> None:
    path = _long_session(tmp_path / "session.jsonl", calls=4)
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([path], store)
        key = str(path.resolve())
        store.conn.execute("UPDATE ingested_files SET stat_key = '', head_hash = 'first 4 KiB' WHERE path = ?", (key,))
        again = ingest_paths([path], store)
        assert (again.files, again.files_unchanged, again.bytes_read) == (0, 1, 0)
        state = store.get_file_state(key)
        assert state.stat_key and state.head_hash == hashlib.sha1(path.read_bytes()).hexdigest()


def test_force_reads_every_given_file_again_without_duplicating(tmp_path: Path) -> None:
    paths = [_long_session(tmp_path / f"s{n}.jsonl", session_id=f"s{n}", calls=3) for n in range(3)]
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([tmp_path], store)
        steps = store.conn.execute("SELECT count(*) FROM steps").fetchone()[0]
        forced = ingest_paths([tmp_path], store, force=True)
        assert (forced.files, forced.files_unchanged, forced.bytes_read) == (3, 0, sum(p.stat().st_size for p in paths))
        assert forced.traces_unchanged == 3
        assert store.conn.execute("SELECT count(*) FROM steps").fetchone()[0] == steps
        result = CliRunner().invoke(app, ["ingest", str(tmp_path), "--force", "--json", "-q"])
        assert result.exit_code == 0 and json.loads(result.stdout)["files"] == 3


def test_chat_files_numbering_their_conversations_alike_keep_all_of_them(tmp_path: Path) -> None:
    for name, topic in (("a.jsonl", "billing"), ("b.jsonl", "search")):
        write_jsonl(tmp_path / name, [{"id": str(n), "messages": [{"role": "user", "content": f"{topic} task {n}"}]}
                                      for n in (1, 2, 3)])
    with open_store(tmp_path / "h.db") as store:
        report = ingest_paths([tmp_path], store)
        assert (report.traces, report.traces_renamed, store.count_traces()) == (6, 3, 6)
        tasks = sorted(t.task for t in store.list_traces())
        assert tasks == sorted(f"{topic} task {n}" for topic in ("billing", "search") for n in (1, 2, 3))
        assert ingest_paths([tmp_path], store).files_unchanged == 2


def test_two_claude_files_with_one_session_id_stay_apart_as_both_grow(tmp_path: Path) -> None:
    first, second = ClaudeSession(session_id="shared"), ClaudeSession(session_id="shared")
    first.user("add the billing export")
    first.bash("a1", "pytest tests/billing", "3 passed")
    second.user("rename the search module")
    a, b = first.write(tmp_path / "a" / "shared.jsonl"), second.write(tmp_path / "b" / "shared.jsonl")
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([a], store)
        assert ingest_paths([b], store).traces_renamed == 1
        first.bash("a2", "ruff check .", "ok")
        second.bash("b1", "git mv search.py find.py", "")
        first.write(a), second.write(b)
        ingest_paths([tmp_path], store)
        assert store.count_traces() == 2
        kept_a = store.get_trace("shared")
        (other,) = [t.id for t in store.list_traces() if t.id != "shared"]
        kept_b = store.get_trace(other)
        assert [c.input["command"] for c in kept_a.tool_calls] == ["pytest tests/billing", "ruff check ."]
        assert [c.input["command"] for c in kept_b.tool_calls] == ["git mv search.py find.py"]
        assert kept_b.task == "rename the search module" and kept_b.source_path == str(b.resolve())


BAD_FIELDS = [
    ("cwd", ["a", "b"]), ("cwd", {"x": 1}), ("cwd", "\ud800"), ("gitBranch", ["main"]), ("type", ["user"]),
    ("type", 5), ("timestamp", {"t": 1}), ("timestamp", 1e308), ("uuid", ["u"]), ("uuid", {"a": 1}),
    ("parentUuid", ["p"]), ("sessionId", ["s"]), ("message", ["m"]), ("isSidechain", "yes"),
]


def _bad_line(field: str, value: object) -> str:
    line = {"type": "user", "uuid": "bad", "sessionId": "sess-a", "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "still here"}}
    line[field] = value
    return json.dumps(line)


@pytest.mark.parametrize(("field", "value"), BAD_FIELDS)
def test_a_line_with_a_field_of_the_wrong_type_costs_at_most_that_line(tmp_path: Path, field: str,
                                                                        value: object) -> None:
    s = ClaudeSession(session_id="sess-a")
    s.user("first task")
    s.bash("m1", "pytest", "1 passed")
    path = s.write(tmp_path / "a.jsonl")
    with path.open("a") as out:
        out.write(_bad_line(field, value) + "\n")
    later = ClaudeSession(session_id="sess-z")
    later.user("the file after it")
    later.write(tmp_path / "z.jsonl")
    with open_store(tmp_path / "h.db") as store:
        report = ingest_paths([tmp_path], store)
        assert report.errors == [] and {t.id for t in store.list_traces()} == {"sess-a", "sess-z"}
        assert len(store.get_trace("sess-a").steps) >= 2


RAW_BAD_LINES = [
    '{"type": "user", "message": {"role": "user", "content": "\\ud800 lone"}, "cwd": "\\udfff"}',
    '{"type": "assistant", "message": {"id": "m9", "content": [{"type": "text", "text": "x"}], '
    '"usage": {"input_tokens": 1e400, "output_tokens": 18446744073709551616}}}',
    '{"type": "user", "toolUseResult": {"stdout": 9223372036854775808}, "message": {"content": '
    '[{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": 1e400}]}]}}',
    "[" * 100_000,
    '{"type": "user", "message": ' + '{"content": ' * 500 + '"deep"' + "}" * 500 + "}",
    '{"type": "user", "message": {"content": "' + "\\u0000" * 10 + '"}}',
    '{"type": NaN, "x": Infinity}',
]


def test_damaged_lines_are_skipped_and_counted_and_the_run_reads_every_file(tmp_path: Path) -> None:
    s = ClaudeSession(session_id="sess-a")
    s.user("first task")
    path = s.write(tmp_path / "a.jsonl")
    with path.open("a") as out:
        out.write("\n".join(RAW_BAD_LINES) + "\n")
    later = ClaudeSession(session_id="sess-z")
    later.user("the file after it")
    later.write(tmp_path / "z.jsonl")
    with open_store(tmp_path / "h.db") as store:
        report = ingest_paths([tmp_path], store)
        assert report.errors == [] and report.files == 2 and store.count_traces() == 2
        assert report.skipped_lines >= 1
        stored = store.get_trace("sess-a")
        assert stored.usage.output_tokens == (1 << 63) - 1 and stored.usage.input_tokens == 0
        assert any("\ufffd lone" in step.text for step in stored.steps)


@pytest.mark.timeout(30)
def test_a_fifo_given_by_name_is_refused_at_once_and_the_next_file_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    s = ClaudeSession(session_id="sess-after")
    s.user("after the pipe")
    good = s.write(tmp_path / "z.jsonl")
    with open_store(tmp_path / "h.db") as store:
        report = ingest_paths([fifo, good], store)
        assert store.count_traces() == 1
        assert report.errors == [{"path": str(fifo), "message": "cannot read: not a regular file (a FIFO)"}]
        assert read_trace_file(fifo).errors[0]["message"] == "not a regular file (a FIFO)"
        assert ingest_paths([tmp_path], store).errors == []  # a walk passes over it


def _without_root_override() -> list[str]:
    """A command prefix under which folder permissions hold (root reads any folder unless it drops that right)."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv to drop the right to read any folder")
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--"]


def test_an_unreadable_sub_folder_is_reported_and_the_rest_ingested(tmp_path: Path, habitus_home: Path,
                                                                    store_backend: str) -> None:
    if store_backend == "postgres":
        pytest.skip("runs habitus without root's file access, which cannot open the test server's socket folder")
    s = ClaudeSession(session_id="sess-ok")
    s.user("readable")
    s.write(tmp_path / "traces" / "a" / "ok.jsonl")
    s.write(tmp_path / "traces" / "locked" / "hidden.jsonl")
    (tmp_path / "traces" / "locked").chmod(0)
    try:
        done = subprocess.run([*_without_root_override(), sys.executable, "-m", "habitus", "ingest", "--json", "-q",
                               str(tmp_path / "traces")], capture_output=True, text=True, timeout=120, check=False)
    finally:
        (tmp_path / "traces" / "locked").chmod(0o755)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr  # a folder failed: not a success
    data = json.loads(done.stdout)
    assert data["traces"] == 1
    locked = str(tmp_path / "traces" / "locked")
    assert data["errors"] == [{"path": locked, "message": "folder skipped: Permission denied"}]


def test_cli_reports_a_kept_longer_copy_in_plain_words(tmp_path: Path) -> None:
    original = _long_session(tmp_path / "s" / "session.jsonl")
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(original.read_bytes()[:20_000])
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(original), "-q"]).exit_code == 0
    result = runner.invoke(app, ["ingest", str(partial), "-q"])
    assert result.exit_code == 0
    assert "kept 1 stored trace(s) that hold more than the shorter copy just read" in " ".join(result.stdout.split())
    data = json.loads(runner.invoke(app, ["ingest", str(partial), "--force", "--json", "-q"]).stdout)
    assert (data["traces_kept_longer"], data["traces"]) == (1, 0)


def test_ingest_exits_non_zero_when_files_failed_and_still_stores_the_rest(tmp_path: Path) -> None:
    """Issue 21 §4: 29 of 98 files failed and `ingest` said 0. The good files are stored and reported,
    each failure is listed, and the exit code is 1 with one line on stderr."""
    for i in range(3):
        s = ClaudeSession(session_id=f"sess-ok-{i}")
        s.user(f"readable {i}")
        s.write(tmp_path / "traces" / f"ok-{i}.jsonl")
    bad = [tmp_path / "notes.txt", tmp_path / "binary.jsonl"]
    bad[0].write_text("just some notes, not a trace\n")
    bad[1].write_bytes(b"\x00\xff" * 100)
    done = subprocess.run([sys.executable, "-m", "habitus", "ingest", "--json", "-q", str(tmp_path / "traces"),
                           *map(str, bad)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "2 file(s) could not be ingested" in done.stderr and "3 new or changed trace(s)" in done.stderr
    data = json.loads(done.stdout)  # still one JSON document with what was stored and what failed
    assert data["traces"] == 3 and sorted(e["path"] for e in data["errors"]) == sorted(map(str, bad))
    store = open_store()
    try:
        assert {f"sess-ok-{i}" for i in range(3)} <= {t.id for t in store.list_traces()}
    finally:
        store.close()
    plain = subprocess.run([sys.executable, "-m", "habitus", "ingest", "-q", *map(str, bad)], capture_output=True,
                           text=True, timeout=120, check=False)
    assert plain.returncode == 1 and "could not be ingested" in plain.stderr and "error" in plain.stdout
