"""Ingest into a real SQLite store: idempotence, incremental growth, filters, concurrency, no secret on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from capture_sessions import ClaudeSession, codex_lines, write_jsonl
from test_redact import ASSIGNMENTS, SECRETS
from typer.testing import CliRunner

from habitus.capture import read_trace_file
from habitus.capture.ingest import ingest_paths, parse_since
from habitus.cli.main import app
from habitus.store import open_store

HABITUS = [sys.executable, "-m", "habitus"]


def _sessions(folder: Path, n: int = 3) -> list[Path]:
    paths = []
    for i in range(n):
        s = ClaudeSession(session_id=f"sess-{i}")
        s.user(f"task number {i}")
        s.tool(f"m{i}a", "Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, "ok")
        s.bash(f"m{i}b", "pytest -q", "1 passed" if i % 2 == 0 else "1 failed", i % 2)
        paths.append(s.write(folder / "proj" / f"sess-{i}.jsonl"))
    paths.append(write_jsonl(folder / "codex" / "rollout-x.jsonl", codex_lines(calls=[("make test", "ok", 0)])))
    return paths


def test_reingest_of_unchanged_files_is_a_no_op(tmp_path: Path) -> None:
    _sessions(tmp_path)
    with open_store(tmp_path / "h.db") as store:
        first = ingest_paths([tmp_path], store)
        assert (first.files, first.traces, first.tool_calls, first.errors) == (4, 4, 7, [])
        steps = store.conn.execute("SELECT count(*) FROM steps").fetchone()[0]
        second = ingest_paths([tmp_path], store)
        assert (second.files, second.files_unchanged, second.traces) == (0, 4, 0)
        assert store.conn.execute("SELECT count(*) FROM steps").fetchone()[0] == steps
        outcomes = {t.id: t.outcome for t in store.list_traces()}
        assert outcomes == {"sess-0": "success", "sess-1": "failure", "sess-2": "success",
                            "019a0000-0000-7000-8000-000000000001": "success"}


def test_touched_but_identical_file_is_recognised_by_content_and_not_read(tmp_path: Path) -> None:
    path = _sessions(tmp_path, 1)[0]
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([path], store)
        os.utime(path, (1, 1))
        again = ingest_paths([path], store)
        assert (again.files, again.files_unchanged, again.traces, again.bytes_read) == (0, 1, 0, 0)
        assert store.get_file_state(str(path.resolve())).mtime == 1


def test_a_grown_session_is_read_from_where_it_stopped(tmp_path: Path) -> None:
    s = ClaudeSession()
    s.user("start")
    s.tool("m1", "Read", {"file_path": "a.py"}, "x = 1")
    path = s.write(tmp_path / "s.jsonl")
    size = path.stat().st_size
    s.tool("m2", "Edit", {"file_path": "a.py", "old_string": "1", "new_string": "2"}, "ok")
    s.bash("m3", "pytest", "1 passed", 0)
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([path], store)
        s.write(path)
        grown = ingest_paths([path], store)
        assert grown.bytes_read == path.stat().st_size - size
        stored = store.get_trace("sess-1")
        assert stored.to_dict() == read_trace_file(path).traces[0].to_dict()
        assert stored.outcome.status.value == "success" and len(stored.tool_calls) == 3


@pytest.mark.parametrize("folder", ["claude_code", "codex"])
def test_corpus_sessions_grown_at_any_line_equal_a_full_read(corpus: Path, tmp_path: Path, folder: str) -> None:
    for n, source in enumerate(sorted((corpus / folder).rglob("*.jsonl"))):
        data = source.read_bytes()
        lines = data.splitlines(keepends=True)
        for cut in (len(lines) // 3, len(lines) * 2 // 3):
            path = tmp_path / f"{n}-{cut}" / source.name
            path.parent.mkdir()
            path.write_bytes(b"".join(lines[:cut]) + lines[cut][:25])  # ends in a half-written line
            with open_store(tmp_path / f"{n}-{cut}.db") as store:
                ingest_paths([path], store)
                path.write_bytes(data)
                ingest_paths([path], store)
                full = read_trace_file(path).traces[0]
                assert store.get_trace(full.id).to_dict() == full.to_dict(), (source.name, cut)


def test_a_rewritten_file_is_read_again_in_full(tmp_path: Path) -> None:
    path = _sessions(tmp_path, 1)[0]
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([path], store)
        s = ClaudeSession(session_id="sess-0")
        s.user("a different beginning, and longer than before " * 5)
        for n in range(3):
            s.bash(f"r{n}", f"make step{n}", "ok")
        s.write(path)
        again = ingest_paths([path], store)
        assert (again.traces, again.traces_renamed, again.traces_kept_longer) == (1, 0, 0)
        assert store.get_trace("sess-0").task.startswith("a different beginning")
        assert store.count_traces() == 1


def test_a_file_rewritten_shorter_and_different_keeps_both_sessions(tmp_path: Path) -> None:
    path = _sessions(tmp_path, 1)[0]
    with open_store(tmp_path / "h.db") as store:
        ingest_paths([path], store)
        before = store.get_trace("sess-0").to_dict()
        s = ClaudeSession(session_id="sess-0")
        s.user("a different beginning")
        s.write(path)
        again = ingest_paths([path], store)
        assert (again.traces, again.traces_renamed) == (1, 1)
        assert store.get_trace("sess-0").to_dict() == before
        (renamed,) = [t for t in store.list_traces() if t.id != "sess-0"]
        assert renamed.id.startswith("sess-0~") and renamed.task == "a different beginning"


def test_since_and_repo_filters_use_dates_and_the_real_git_subject(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "root"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
    root = subprocess.run(["git", "-C", str(repo), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    inside = ClaudeSession(session_id="inside", cwd=str(repo))
    inside.user("work in the repo")
    inside.write(tmp_path / "s" / "inside.jsonl")
    outside = ClaudeSession(session_id="outside", cwd=str(tmp_path))
    outside.user("elsewhere")
    outside.write(tmp_path / "s" / "outside.jsonl")
    with open_store(tmp_path / "h.db") as store:
        report = ingest_paths([tmp_path / "s"], store, repo=repo)
        assert report.traces == 1
        assert store.get_trace("inside").subject == root
        assert store.get_trace("outside") is None
    with open_store(tmp_path / "h2.db") as store:
        assert ingest_paths([tmp_path / "s"], store, since="2999-01-01").traces == 0
        assert ingest_paths([tmp_path / "s"], store, since="2000-01-01").traces == 2


@pytest.mark.parametrize("text, ok", [("7d", True), ("2026-01-31", True), ("2026-01-31T10:00:00Z", True),
                                      ("yesterday", False)])
def test_parse_since_accepts_ages_and_iso_dates(text: str, ok: bool) -> None:
    if ok:
        assert len(parse_since(text)) == 19
    else:
        with pytest.raises(ValueError, match="--since"):
            parse_since(text)


def _run(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HABITUS, *args], capture_output=True, text=True, env=env, timeout=120, **kw)


def test_four_processes_ingesting_one_store_at_once_neither_fail_nor_duplicate(tmp_path: Path,
                                                                                 habitus_home: Path) -> None:
    for i in range(12):
        s = ClaudeSession(session_id=f"c-{i}")
        for j in range(30):
            s.user(f"turn {j}")
            s.bash(f"m{i}-{j}", f"echo {j}", "x" * 2000)
        s.write(tmp_path / "data" / f"c-{i}.jsonl")
    env = {**os.environ, "HABITUS_HOME": str(habitus_home)}
    procs = [subprocess.Popen([*HABITUS, "ingest", str(tmp_path / "data"), "--json", "-q"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(4)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e for _, e in outputs]
    reports = [json.loads(out) for out, _ in outputs]
    assert all(r["errors"] == [] for r in reports)
    assert sum(r["traces"] for r in reports) == 12  # each trace stored by exactly one process
    with open_store() as store:
        assert store.count_traces() == 12
        assert store.conn.execute("SELECT count(*) FROM steps").fetchone()[0] == 12 * 60
        dup = store.conn.execute("SELECT count(*) FROM (SELECT trace_id, idx FROM steps GROUP BY 1, 2 "
                                 "HAVING count(*) > 1)").fetchone()[0]
        assert dup == 0


def test_planted_secrets_never_reach_the_database_file(tmp_path: Path, habitus_home: Path) -> None:
    planted = list(SECRETS.values()) + [secret for _, secret in ASSIGNMENTS.values()]
    s = ClaudeSession(session_id="leaky")
    s.user(f"use this key {SECRETS['openai']} and {ASSIGNMENTS['password='][0]}")
    s.assistant("m1", [{"type": "text", "text": f"I will export {ASSIGNMENTS['token:'][0]}"}])
    bearer, url = ASSIGNMENTS["bearer header"][1], ASSIGNMENTS["url credentials"][0]
    s.bash("m2", f"curl -H 'Authorization: Bearer {bearer}' {url}", "\n".join(f"{k}: {v}" for k, v in SECRETS.items()))
    s.tool("m3", "Write", {"file_path": ".env", "content": ASSIGNMENTS["json key"][0] + "\n"
                           + ASSIGNMENTS["secret_key ="][0]}, "ok")
    s.write(tmp_path / "data" / "leaky.jsonl")
    lines = codex_lines(calls=[(f"export GH={SECRETS['github']}", SECRETS["github_pat"], 0)])
    write_jsonl(tmp_path / "data" / "rollout-leaky.jsonl", lines)
    env = {**os.environ, "HABITUS_HOME": str(habitus_home)}
    done = _run(["ingest", str(tmp_path / "data"), "--json", "-q"], env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["redactions"] >= len(planted) and report["traces"] == 2
    for secret in planted:
        assert secret not in done.stdout
    with open_store() as store:
        store.checkpoint()
    blobs = b"".join(p.read_bytes() for p in habitus_home.glob("habitus.db*"))
    assert b"[REDACTED:" in blobs
    for secret in planted:
        assert secret.encode() not in blobs, secret[:12]
        assert secret[:24].encode() not in blobs, secret[:12]


def test_cli_ingest_list_show_stats_and_doctor_work_end_to_end(tmp_path: Path, habitus_home: Path) -> None:
    _sessions(tmp_path / "data")
    env = {**os.environ, "HABITUS_HOME": str(habitus_home)}
    report = json.loads(_run(["ingest", str(tmp_path / "data"), "--json", "-q"], env).stdout)
    assert {"files", "traces", "steps", "tool_calls", "skipped_lines", "redactions", "errors"} <= set(report)
    # the read side runs in-process (same Typer app, faster than a process per command)
    runner = CliRunner()
    listed = json.loads(runner.invoke(app, ["traces", "list", "--json"]).stdout)
    assert {row["id"] for row in listed} >= {"sess-0", "sess-1", "sess-2"}
    stats = json.loads(runner.invoke(app, ["traces", "stats", "sess-1", "--json"]).stdout)
    assert stats["tool_calls_by_tool"] == {"Edit": 1, "Bash": 1} and stats["failed_tool_calls"] == 1
    assert stats["tokens"]["cache_read"] == 2000
    every = json.loads(runner.invoke(app, ["traces", "stats", "--all", "--json"]).stdout)
    assert every["total"]["traces"] == 4 and every["total"]["tool_calls"] == 7
    default = runner.invoke(app, ["traces", "stats"])  # no id, no --all: the totals, not an error
    assert default.exit_code == 0 and "total: 4 traces, 7 tool calls" in default.stdout
    assert json.loads(runner.invoke(app, ["traces", "stats", "--json"]).stdout) == {"total": every["total"]}
    piped = runner.invoke(app, ["traces", "list"]).stdout.splitlines()  # not a terminal: whole cells, tab-separated
    assert piped[0].split("\t") == ["id", "agent", "started", "steps", "tools", "outcome", "task"]
    by_id = {line.split("\t")[0]: line.split("\t") for line in piped[1:]}
    assert {r["id"] for r in listed} == set(by_id)
    for row in listed:
        assert by_id[row["id"]][6] == " ".join((row["task"] or "").split())
    shown = runner.invoke(app, ["traces", "show", "sess-1"])
    assert shown.exit_code == 0 and "pytest -q" in shown.stdout and "[failed, exit 1]" in shown.stdout
    doctor = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    assert doctor["store"]["ok"] and doctor["store"]["traces"] == 4 and doctor["fts5"] is True
    unknown = runner.invoke(app, ["traces", "show", "zzz"])
    assert unknown.exit_code == 1 and "no trace" in unknown.stderr
    missing = _run(["ingest", str(tmp_path / "nope")], env)
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "no such file" in missing.stderr


def test_ingest_without_paths_discovers_the_agents_folders(tmp_path: Path, habitus_home: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    claude_home, codex_home = tmp_path / "claude", tmp_path / "codex"
    s = ClaudeSession(session_id="found-claude")
    s.user("hello")
    s.write(claude_home / "projects" / "-work-repo" / "found-claude.jsonl")
    write_jsonl(codex_home / "sessions" / "2026" / "01" / "01" / "rollout-a.jsonl", codex_lines())
    homes = {"CLAUDE_CONFIG_DIR": str(claude_home), "CODEX_HOME": str(codex_home),
             "COPILOT_HOME": str(tmp_path / "none"), "GEMINI_CLI_HOME": str(tmp_path / "none")}
    env = {**os.environ, "HABITUS_HOME": str(habitus_home), **homes}
    report = json.loads(_run(["ingest", "--json", "-q"], env, cwd=tmp_path).stdout)
    assert report["traces"] == 2 and report["files"] == 2
    for name, value in homes.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    doctor = json.loads(CliRunner().invoke(app, ["doctor", "--json"]).stdout)
    assert [(loc["agent"], loc["files"]) for loc in doctor["trace_locations"]] == [
        ("claude-code", 1), ("codex", 1), ("copilot-cli", 0), ("gemini-cli", 0), ("specstory", 0), ("aider", 0)]


def test_traces_list_in_a_pipe_sanitises_each_cell_and_keeps_it_on_one_line() -> None:
    from habitus.cli.traces_cmd import _list_cells

    row = {"id": "t1", "agent": "claude-code", "started": "2026-01-02T03:04:05Z", "steps": 3, "tool_calls": 1,
           "outcome": "success", "task": "Fix\tthe\x1b[8m hidden\nparser\u200b now"}
    cells = _list_cells(row)
    assert cells[2] == "2026-01-02 03:04" and cells[6] == "Fix the hidden parser now"
    assert not any(ch in "".join(cells) for ch in "\t\n\x1b\u200b")
