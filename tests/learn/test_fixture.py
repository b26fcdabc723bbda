"""The fixture generator: a real git repo whose history matches agent sessions in real formats."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from habitus.bench.fixture import make_fixture_repo
from habitus.capture import read_trace_file


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory):
    return make_fixture_repo(tmp_path_factory.mktemp("fixture"), seed=0, sessions=12)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_twelve_sessions_of_three_kinds_plus_an_inspect_session(fx):
    kinds = [s.kind for s in fx.sessions]
    assert {k: kinds.count(k) for k in set(kinds)} == {"shortcut": 4, "endpoint": 4, "config": 4, "inspect": 1}
    assert {s.agent for s in fx.sessions} == {"claude-code", "codex"}
    assert any(s.detour for s in fx.sessions) and not all(s.detour for s in fx.sessions)


def test_git_history_has_one_commit_per_change_session(fx):
    log = _git(fx.repo, "log", "--format=%H").split()
    assert len(log) == 13  # initial + 12
    assert [s.commit for s in fx.sessions if s.commit] == list(reversed(log[:-1]))


def test_every_session_file_reads_back_as_a_trace_with_the_task_and_cwd(fx):
    for s in fx.sessions:
        result = read_trace_file(s.path)
        assert not result.errors and not result.unknown_types, s.path
        [trace] = result.traces
        assert trace.task == s.task
        assert trace.cwd == str(fx.repo)
        assert trace.usage.total_tokens > 0
        if s.kind != "inspect":
            assert trace.outcome.status == "success"


def test_tool_calls_are_paired_and_detours_show_as_failed_commands(fx):
    for s in fx.sessions:
        [trace] = read_trace_file(s.path).traces
        calls = trace.tool_calls
        assert all(c.output is not None for c in calls)
        failed = [c for c in calls if c.exit_code not in (None, 0)]
        assert bool(failed) == s.detour, s.path


def test_subagent_file_reads_as_its_own_trace_of_the_session(fx):
    first = fx.sessions[0]
    [sub_path] = first.subagent_paths
    [trace] = read_trace_file(sub_path).traces
    assert trace.meta["parent_session"] == first.session_id
    assert all(step.sidechain for step in trace.steps)


def test_claude_lines_of_one_response_share_message_id_and_usage(fx):
    path = next(s.path for s in fx.sessions if s.agent == "claude-code" and s.kind != "inspect")
    by_id: dict[str, list[dict]] = {}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant":
            by_id.setdefault(d["message"]["id"], []).append(d["message"]["usage"])
    assert any(len(v) > 1 for v in by_id.values())
    for usages in by_id.values():
        assert len({u["cache_read_input_tokens"] for u in usages}) == 1


def test_same_seed_gives_identical_commits(tmp_path):
    a = make_fixture_repo(tmp_path / "a", seed=3, sessions=3, inspect=False)
    b = make_fixture_repo(tmp_path / "b", seed=3, sessions=3, inspect=False)
    assert [s.commit for s in a.sessions] == [s.commit for s in b.sessions]
    assert [(s.task, s.detour, s.agent) for s in a.sessions] == [(s.task, s.detour, s.agent) for s in b.sessions]


def test_new_task_uses_values_no_session_used_and_add_session_commits(fx, tmp_path):
    task, values = fx.new_task("shortcut")
    assert values not in fx.used_values("shortcut")
    assert values["key"] in task
    local = make_fixture_repo(tmp_path / "x", seed=1, sessions=3, inspect=False)
    before = _git(local.repo, "rev-parse", "HEAD").strip()
    added = local.add_session("endpoint", detour=True)
    assert added.commit != before and added.path.exists()
    assert added.values["handler"] in (local.repo / "server/api.py").read_text()
