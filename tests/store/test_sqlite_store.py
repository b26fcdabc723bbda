"""The SQLite trace store: round trips, idempotent puts, search, filters, and the atomic file commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends import open_store
from habitus.core import Outcome, OutcomeSource, OutcomeStatus, Step, StepKind, ToolCall, Trace, Usage
from habitus.store.base import FileState
from habitus.store.home import default_db_path
from habitus.store.sqlite import StoreError


def _trace(trace_id: str = "t1", *, task: str = "migrate the billing tables", subject: str | None = "abc@git:x",
           started: str = "2026-01-02T00:00:00Z", cwd: str = "/work/repo") -> Trace:
    call = ToolCall(name="Bash", input={"command": "pytest -q"}, call_id="c1", output="1 passed", output_size=8,
                    exit_code=0)
    return Trace(
        id=trace_id, source_format="claude", agent="claude-code", session_id=trace_id, model="m", cwd=cwd,
        subject=subject, started=started, ended=started, task=task,
        steps=[Step(kind=StepKind.USER, text=task, timestamp=started),
               Step(kind=StepKind.ASSISTANT, text="running the suite", usage=Usage(1, 2, 3, 4),
                    meta={"message_id": "m1"}),
               Step(kind=StepKind.TOOL, tool=call, sidechain=True, agent_id="a1")],
        outcome=Outcome(OutcomeStatus.SUCCESS, OutcomeSource.CHECKS, "last test passed"),
        usage=Usage(1, 2, 3, 4, cost=0.5), meta={"titles": ["x"]},
    )


def test_open_store_defaults_to_habitus_home_in_wal_mode(store_backend: str) -> None:
    store = open_store()
    try:
        if store_backend == "sqlite":
            assert store.path == default_db_path()
            assert store.health()["journal_mode"] == "wal"
        else:  # HABITUS_STORE_URL names the shared store; its password never shows
            assert store.health()["backend"] == "postgres"
            assert store.health()["extensions"]["vector"]
        assert store.health()["schema_versions"]["traces"] >= 1
    finally:
        store.close()


def test_put_then_get_round_trips_every_field(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.db") as store:
        trace = _trace()
        assert store.put_trace(trace) is True
        assert store.get_trace("t1").to_dict() == trace.to_dict()


def test_putting_the_same_trace_again_changes_nothing(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.db") as store:
        store.put_trace(_trace())
        assert store.put_trace(_trace()) is False
        changed = _trace()
        changed.steps.append(Step(kind=StepKind.ASSISTANT, text="done"))
        assert store.put_trace(changed) is True
        assert len(store.get_trace("t1").steps) == 4
        assert store.conn.execute("SELECT count(*) FROM steps").fetchone()[0] == 4
        assert store.count_traces() == 1


def test_search_finds_task_and_message_words_not_tool_output(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.db") as store:
        store.put_traces([_trace("t1"), _trace("t2", task="write the release notes")])
        assert [s.id for s in store.search_traces("billing")] == ["t1"]
        assert [s.id for s in store.search_traces("release notes")] == ["t2"]
        assert sorted(s.id for s in store.search_traces("suite")) == ["t1", "t2"]
        assert store.search_traces("passed") == []  # tool output is not indexed
        assert store.search_traces('" OR ( NEAR') == []  # operators are quoted, never injected


def test_replacing_a_trace_drops_its_old_search_rows(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.db") as store:
        store.put_trace(_trace())
        store.put_trace(_trace(task="something else entirely"))
        assert store.search_traces("billing") == []
        store.delete_trace("t1")
        assert store.health()["search_rows"] == 0


@pytest.mark.parametrize("kwargs, expected", [
    ({"subject": "abc@git:x"}, ["t2", "t1"]),
    ({"subject": "abc@https://other/remote"}, ["t2", "t1"]),  # same root commit, another clone
    ({"subject": "zzz"}, []),
    ({"since": "2026-01-03"}, ["t2"]),
    ({"repo": "/work/repo"}, ["t2", "t1"]),
    ({"repo": "/work/rep"}, []),
])
def test_list_filters_by_subject_root_date_and_repo_folder(tmp_path: Path, kwargs: dict, expected: list) -> None:
    with open_store(tmp_path / "h.db") as store:
        store.put_traces([_trace("t1"), _trace("t2", started="2026-01-05T00:00:00Z", cwd="/work/repo/sub")])
        assert [s.id for s in store.list_traces(**kwargs)] == expected


def test_commit_file_refuses_a_stale_expected_offset(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.db") as store:
        state = FileState(path="/x.jsonl", size=10, mtime=1.0, offset=10, head_hash="h", format="claude",
                          trace_ids=["t1"], resume={"k": 1})
        assert store.commit_file([_trace()], state, expected_offset=None) == 1
        assert store.commit_file([_trace()], state, expected_offset=None) is None  # someone got there first
        assert store.get_file_state("/x.jsonl") == state
        grown = FileState(path="/x.jsonl", size=20, mtime=2.0, offset=20, head_hash="h", format="claude")
        assert store.commit_file([], grown, expected_offset=10) == 0
        assert store.get_file_state("/x.jsonl").offset == 20


def test_resolve_trace_id_accepts_a_unique_prefix(tmp_path: Path) -> None:
    with open_store(tmp_path / "h.db") as store:
        store.put_traces([_trace("abc-1"), _trace("abd-2")])
        assert store.resolve_trace_id("abc") == "abc-1"
        assert store.resolve_trace_id("ab") is None
        assert store.resolve_trace_id("abd-2") == "abd-2"


def test_a_corrupt_database_file_is_a_clear_error(tmp_path: Path, store_backend: str) -> None:
    if store_backend == "postgres":  # the shared store's counterpart: a server that is not there
        from habitus.store import open_store as open_configured

        url = f"postgresql://habitus:secret@/none?host={tmp_path}&connect_timeout=2"
        with pytest.raises(StoreError) as info:
            open_configured(url)
        assert "cannot open store" in str(info.value) and "secret" not in str(info.value)
        return
    path = tmp_path / "bad.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError) as info:
        open_store(path)
    assert "bad.db" in str(info.value) and "not a database" in str(info.value)


def _written_by_a_newer_build(path: Path | None, component: str = "traces") -> None:
    with open_store(path) as store:
        store.put_trace(_trace())
        store.conn.execute("UPDATE schema_versions SET version = version + 5 WHERE component = ?", (component,))


@pytest.mark.parametrize("readonly", [False, True])
def test_a_store_written_by_a_newer_build_is_refused_not_used(tmp_path: Path, readonly: bool,
                                                              store_backend: str) -> None:
    path = tmp_path / "h.db"
    _written_by_a_newer_build(path)
    with pytest.raises(StoreError) as info:
        open_store(path, readonly=readonly)
    where = "h.db" if store_backend == "sqlite" else "postgresql://"  # the message names the store
    assert "newer habitus" in str(info.value) and where in str(info.value)


def test_every_component_refuses_a_newer_schema_of_its_own(tmp_path: Path) -> None:
    from habitus.store.memory import ensure_memory_schema
    from habitus.store.sqlite import connect

    path = tmp_path / "h.db"
    conn = connect(path)
    ensure_memory_schema(conn)
    conn.execute("UPDATE schema_versions SET version = version + 1 WHERE component = 'memory'")
    with pytest.raises(StoreError, match="newer habitus"):
        ensure_memory_schema(conn)
    conn.close()


@pytest.mark.parametrize("args", [["traces", "list"], ["ingest", "--json", "."], ["doctor"]])
def test_cli_on_a_newer_store_says_so_in_one_line(tmp_path: Path, habitus_home: Path, args: list[str],
                                                   store_backend: str) -> None:
    import subprocess
    import sys

    _written_by_a_newer_build(habitus_home / "habitus.db" if store_backend == "sqlite" else None)  # the configured one
    done = subprocess.run([sys.executable, "-m", "habitus", *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60, check=False)
    if args == ["doctor"]:  # doctor reports what it finds and carries on
        assert "newer habitus" in " ".join(done.stdout.split()) and "Traceback" not in done.stderr
        return
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "newer habitus" in lines[0], done.stderr


def test_doctor_reports_the_configured_store(store_backend: str) -> None:
    import json

    from typer.testing import CliRunner

    from habitus.cli.main import app

    done = CliRunner().invoke(app, ["doctor", "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    if store_backend == "postgres":
        assert report["shared_store"]["ok"] and report["shared_store"]["backend"] == "postgres"
    else:
        assert "shared_store" not in report
    shown = CliRunner().invoke(app, ["doctor"])
    assert ("shared store:" in shown.stdout) is (store_backend == "postgres")
