"""What the real CLIs write is learned: exact counts from their transcripts, and the next sessions get it.

Scripted sessions make the repo's recurring mistake (`make test` before `make migrate`) and fix it;
the session-end hook (Claude `SessionEnd`, Codex `Stop`) ingests the transcript the CLI itself
wrote (Claude Code JSONL; a Codex rollout with `exec_command` and the freeform `apply_patch` items)
and learns from it. The second session is handed what the first taught (where such a change goes);
once two sessions did the same kind of task, the third is handed the workflow: its place, the check
that worked and the trap. The hand-overs those sessions got are in their transcripts (a Claude Code
`hook_additional_context` attachment, a Codex developer message): they are read as habitus' own
system steps, never as the task, and learning again takes no word from them.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path

import pytest
from tests.clients.conftest import Sandbox, agent_cli, migration_repo, wait_for
from tests.clients.memory import warning_names_the_trap

from habitus.core.injected import HANDOVER_MARK
from scripted_model import Turn, call, conversation_text, say, scripted_model

pytestmark = pytest.mark.slow

ANY_HANDOVER = HANDOVER_MARK  # the repo's past work (places) or, once a kind of task recurs, its workflows
# words only the hand-over says (its heads and notes), never the tasks, the code or the commands
HANDOVER_ONLY = {"hints", "relying", "picked", "pitfalls", "earlier", "verify", "quoted", "instruction"}
TASKS = ["add an email column to the users table", "add a phone column to the users table",
         "add a birthday column to the users table"]


def _ingested(box: Sandbox, count: int) -> list[dict]:
    """The stored traces, once the detached session-end job has stored `count` of them and finished learning."""
    def learning() -> bool:  # the job is `python -m habitus.deliver.hook --ingest <a transcript of this sandbox>`
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                args = cmdline.read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--ingest" in args and any(str(box.root).encode() in a for a in args):
                return True
        return False

    def done() -> list[dict] | None:
        traces = json.loads(box.habitus("traces", "list", "--json").stdout)
        return traces if len(traces) >= count and not learning() else None

    return wait_for(done, what=f"{count} ingested trace(s) and the learning after them")


def _failed(tool: dict) -> bool:
    return bool(tool["is_error"]) or tool["exit_code"] not in (None, 0)


def _steps(box: Sandbox, trace_id: str) -> list[dict]:
    return json.loads(box.habitus("traces", "show", trace_id, "--json").stdout)["steps"]


def _assert_taught(firsts: list[str], box: Sandbox) -> None:
    assert ANY_HANDOVER not in firsts[0]  # nothing learned yet
    assert ANY_HANDOVER in firsts[1] and "db/migrations.py" in firsts[1]  # where the first session's change went
    third = firsts[2]
    assert "Workflows that fit" in third and "db/migrations.py" in third  # the kind of task recurred: a workflow
    assert "Checks (run all): `make test`" in third  # the check those tasks ran (and passed), never the setup step
    # and the trap: its fix is the step between the failure and the next pass of the same check
    assert "If `make test` fails, run `make migrate`, then `make test`." in third
    workflows = json.loads(box.habitus("workflows", "list", "--json").stdout)
    assert len(workflows) == 1 and workflows[0]["pitfalls"] == 1


def _words(value: object) -> set[str]:
    return set(re.findall(r"[a-z]+", json.dumps(value).lower()))


def _assert_hand_overs_not_learned(box: Sandbox) -> None:
    """The hand-overs sessions 2 and 3 got are in their traces as habitus' system steps, never task text, and
    learning again (records, map, workflows) takes no word from them."""
    traces = json.loads(box.habitus("traces", "list", "--json").stdout)
    handed = 0
    for trace in traces:
        steps = _steps(box, trace["id"])
        injected = [s for s in steps if s["meta"].get("injected") == "habitus"]
        handed += any(ANY_HANDOVER in s["text"] for s in injected)
        assert all(s["kind"] == "system" for s in injected)
        own = [trace["task"]] + [s["text"] for s in steps if s["kind"] in ("user", "summary")]
        assert not any("habitus" in text or HANDOVER_ONLY & _words(text) for text in own), own
    assert handed == 2
    box.habitus("learn", "--repo", str(box.repo))
    from habitus.capture.subject import repo_subject
    from habitus.store.repomap import load_repo_map_data

    with closing(sqlite3.connect(box.habitus_home / "habitus.db")) as conn:
        repomap = load_repo_map_data(conn, repo_subject(box.repo))
    workflows = [json.loads(box.habitus("workflows", "show", wf["id"], "--json").stdout)
                 for wf in json.loads(box.habitus("workflows", "list", "--json").stdout)]
    assert repomap and workflows
    learned = [repomap["files"], repomap["past"]]  # task words per file, and past tasks' titles and words
    assert not HANDOVER_ONLY & (_words(learned) | _words([(w.get("cues"), w.get("use_when"), w.get("name"))
                                                          for w in workflows]))


def test_claude_transcripts_are_learned_and_the_next_sessions_get_it(sandbox: Sandbox) -> None:
    agent_cli("claude")
    migration_repo(sandbox.repo)
    sandbox.habitus("hooks", "install", "--agent", "claude", "--scope", "project")
    migrations = str(sandbox.repo / "db" / "migrations.py")

    def teach(column: str) -> list[Turn]:
        return [call("Read", file_path=migrations),
                call("Edit", file_path=migrations, old_string="MIGRATIONS = []",
                     new_string=f"MIGRATIONS = ['add users.{column}']"),
                call("Bash", command="make test"), call("Bash", command="make migrate && make test"),
                say(f"Added the {column} column.")]

    firsts = []
    for n, task in enumerate(TASKS, 1):
        (sandbox.repo / ".migrated").unlink(missing_ok=True)
        with scripted_model(teach(task.split()[2])) as model:
            sandbox.claude(task, model.url, "--allowedTools", "Bash,Edit,Read")
            requests = [conversation_text(b) for b in model.agent_requests()]
        firsts.append(requests[0])
        (trace, *_) = _ingested(sandbox, n)
        if n == 1:
            (transcript,) = sandbox.claude_transcripts()
            assert (trace["agent"], trace["source_path"]) == ("claude-code", str(transcript))
            steps = _steps(sandbox, trace["id"])
            assert (trace["steps"], trace["tool_calls"]) == (6, 4)
            assert Counter(s["kind"] for s in steps) == {"user": 1, "tool": 4, "assistant": 1}
            tools = [s["tool"] for s in steps if s["kind"] == "tool"]
            assert [t["name"] for t in tools] == ["Read", "Edit", "Bash", "Bash"]
            assert [_failed(t) for t in tools] == [False, False, True, False]
        if n == 3:  # the trap, learned from two sessions, is named right after the failing command
            assert warning_names_the_trap(requests[3])
        sandbox.repo.joinpath("db", "migrations.py").write_text("MIGRATIONS = []\n")
    _assert_taught(firsts, sandbox)
    _assert_hand_overs_not_learned(sandbox)


def test_codex_rollouts_are_learned_and_the_next_sessions_get_it(sandbox: Sandbox) -> None:
    agent_cli("codex")
    migration_repo(sandbox.repo)
    sandbox.habitus("hooks", "install", "--agent", "codex", "--scope", "user")
    firsts = []
    for n, task in enumerate(TASKS, 1):
        column = task.split()[2]
        patch = ("*** Begin Patch\n*** Update File: db/migrations.py\n@@\n-MIGRATIONS = []\n"
                 f"+MIGRATIONS = ['add users.{column}']\n*** End Patch\n")
        teach = [call("exec_command", cmd="cat db/migrations.py"), call("apply_patch", patch),
                 call("exec_command", cmd="make test"), call("exec_command", cmd="make migrate && make test"),
                 say(f"Added the {column} column.")]
        (sandbox.repo / ".migrated").unlink(missing_ok=True)
        with scripted_model(teach) as model:
            sandbox.codex(task, model.url, "--dangerously-bypass-hook-trust")
            requests = [conversation_text(b) for b in model.agent_requests()]
        firsts.append(requests[0])
        rollouts = sandbox.codex_rollouts()
        traces = _ingested(sandbox, n)
        if n == 1:
            (rollout,) = rollouts
            (trace,) = traces
            assert (trace["agent"], Path(trace["source_path"])) == ("codex", rollout)
            steps = _steps(sandbox, trace["id"])
            assert trace["tool_calls"] == 4
            kinds = Counter(s["kind"] for s in steps)
            assert (kinds["user"], kinds["tool"], kinds["assistant"]) == (1, 4, 1)
            # Codex's own context (skills list, environment) arrives as two developer/context messages
            assert kinds["system"] == 2 and trace["steps"] == 8
            tools = [s["tool"] for s in steps if s["kind"] == "tool"]
            assert [t["name"] for t in tools] == ["exec_command", "apply_patch", "exec_command", "exec_command"]
            assert [_failed(t) for t in tools] == [False, False, True, False]
        if n == 3:
            assert warning_names_the_trap(requests[3])
        sandbox.repo.joinpath("db", "migrations.py").write_text("MIGRATIONS = []\n")
    _assert_taught(firsts, sandbox)
    _assert_hand_overs_not_learned(sandbox)
