"""Copilot CLI, Gemini CLI, aider and SpecStory readers on small synthetic sessions (tests/capture/agent_fixtures.py):
exact step and tool-call counts, detection by content, outcomes, usage, redaction, and a CLI ingest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from agent_fixtures import (
    AIDER_HISTORY,
    SPECSTORY_CLAUDE,
    SPECSTORY_CURSOR_LEGACY,
    copilot_events,
    gemini_records,
    write_jsonl,
)
from test_redact import SECRETS

from habitus.capture import detect_format, iter_trace_files, read_trace_file
from habitus.core import OutcomeSource, OutcomeStatus, StepKind, Trace
from habitus.store import open_store


def _kinds(trace: Trace) -> dict[str, int]:
    return dict(Counter(s.kind.value for s in trace.steps))


def test_copilot_session_steps_calls_exit_codes_usage_and_outcome(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "session-state" / "c0ffee00" / "events.jsonl", copilot_events(SECRETS["github"]))
    assert detect_format(path) == "copilot"
    result = read_trace_file(path)
    assert result.format == "copilot" and not result.errors
    assert dict(result.unknown_types) == {"copilot:session.frobnicated": 1}
    trace = result.traces[0]
    assert trace.id == "c0ffee00-0000-4000-8000-000000000001" and trace.agent == "copilot-cli"
    assert (trace.model, trace.cwd, trace.git_branch) == ("claude-sonnet-4.6", "/home/dev/shop", "main")
    assert trace.git_commits == ["2de577249fd743b468824e1326b8603a00792511"]
    assert _kinds(trace) == {"user": 1, "assistant": 3, "tool": 5}
    assert [c.name for c in trace.tool_calls] == ["view", "bash", "edit", "view", "bash"]
    assert [c.exit_code for c in trace.tool_calls if c.name == "bash"] == [1, 0]
    assert [c.ok for c in trace.tool_calls] == [True, False, True, False, True]
    assert trace.tool_calls[3].output == "Path does not exist"
    assert (trace.usage.input_tokens, trace.usage.cache_read_tokens, trace.usage.cache_write_tokens,
            trace.usage.output_tokens) == (12000, 30000, 2000, 91)
    assert trace.meta["usage_by_model"]["claude-sonnet-4.6"]["requests"] == 4
    assert trace.meta["files_modified"] == ["/home/dev/shop/paging.py"]
    assert trace.outcome.status == OutcomeStatus.SUCCESS and "pytest -q" in (trace.outcome.feedback or "")
    assert SECRETS["github"] not in trace.task and result.redactions >= 1


def test_copilot_session_without_shutdown_keeps_the_output_counts_and_says_input_is_missing(tmp_path: Path) -> None:
    events = [e for e in copilot_events() if e["type"] != "session.shutdown"]
    trace = read_trace_file(write_jsonl(tmp_path / "x.jsonl", events)).traces[0]
    assert (trace.usage.input_tokens, trace.usage.output_tokens) == (0, 40 + 30 + 12 + 9)
    assert "no session.shutdown" in trace.meta["usage_source"]
    assert trace.id == "c0ffee00-0000-4000-8000-000000000001"  # from session.start, whatever the file name


def test_gemini_recording_last_record_wins_rewind_drops_the_turn_and_tokens_split_cache(tmp_path: Path) -> None:
    chats = tmp_path / "gemini" / "tmp" / "shop" / "chats"
    path = write_jsonl(chats / "session-2026-10-09T10-13-9b1f0c2e.jsonl", gemini_records(SECRETS["aws"]))
    (chats.parent / ".project_root").write_text("/home/dev/shop\n")
    assert detect_format(path) == "gemini"
    result = read_trace_file(path)
    trace = result.traces[0]
    assert not result.errors and dict(result.unknown_types) == {"gemini:<rewound messages>": 2}
    assert (trace.id, trace.agent) == ("9b1f0c2e-5e2a-4c1e-9d7a-0a1b2c3d4e5f", "gemini-cli")
    assert trace.cwd == "/home/dev/shop"
    assert _kinds(trace) == {"user": 1, "assistant": 3, "tool": 4, "system": 1}
    assert [c.name for c in trace.tool_calls] == ["run_shell_command", "replace", "read_file", "run_shell_command"]
    assert [c.exit_code for c in trace.tool_calls] == [1, None, None, 0]
    assert [c.ok for c in trace.tool_calls] == [False, True, False, True]
    assert trace.tool_calls[2].output == "File not found"
    assert not any("delete the repo" in s.text or s.text == "Deleting." for s in trace.steps)
    # input includes cached tokens (12000 - 8000), thoughts are output (300 + 120), per answer
    assert (trace.usage.input_tokens, trace.usage.cache_read_tokens, trace.usage.output_tokens) == (11500, 28000, 1680)
    assert trace.model == "gemini-3-pro-preview" and trace.steps[-1].meta["model"] == "gemini-3-flash-preview"
    assert trace.meta["titles"] == ["Fix the paging off-by-one"] and trace.ended == "2026-10-09T10:14:31.000Z"
    assert trace.outcome.status == OutcomeStatus.SUCCESS and "npm test" in (trace.outcome.feedback or "")
    assert SECRETS["aws"] not in trace.task


def test_gemini_older_single_document_reads_the_same_and_folder_walks_take_it_by_content(tmp_path: Path) -> None:
    records = gemini_records()
    messages: dict[str, dict] = {}
    for record in records[1:]:
        if "id" in record:
            messages[record["id"]] = record
    for gone in ("u2", "g4"):
        del messages[gone]
    document = {**records[0], "messages": list(messages.values())}
    legacy = tmp_path / "chats" / "session-2025-09-18T02-45-3b44bc68.json"
    legacy.parent.mkdir()
    legacy.write_text(json.dumps(document, indent=2))
    (tmp_path / "chats" / "settings.json").write_text(json.dumps({"theme": "dark", "sessionId": "not a recording"}))
    assert detect_format(legacy) == "gemini"
    trace = read_trace_file(legacy).traces[0]
    assert _kinds(trace) == {"user": 1, "assistant": 3, "tool": 4, "system": 1}
    assert [c.exit_code for c in trace.tool_calls] == [1, None, None, 0]
    assert list(iter_trace_files([tmp_path])) == [legacy]


def test_gemini_subagent_recording_names_its_parent(tmp_path: Path) -> None:
    rows = gemini_records()[:4]
    rows[0] = {**rows[0], "sessionId": "sub-1", "kind": "subagent"}
    trace = read_trace_file(write_jsonl(tmp_path / "chats" / "parent-9" / "sub-1.jsonl", rows)).traces[0]
    assert trace.id == "parent-9:sub-1" and trace.meta["parent_session"] == "parent-9"
    assert trace.cwd is None  # no .project_root: unknown, not guessed


def test_aider_history_sessions_edits_commands_tokens_and_outcome(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(AIDER_HISTORY)
    assert detect_format(path) == "aider"
    result = read_trace_file(path)
    first, second = result.traces
    assert [t.id for t in read_trace_file(path).traces] == [first.id, second.id]  # stable across reads
    assert first.id != second.id and first.started == "2026-01-05T09:00:00"
    assert (first.model, first.meta["agent_version"], first.cwd) == ("gpt-5.2", "0.86.1", str(tmp_path))
    assert _kinds(first) == {"user": 1, "assistant": 2, "tool": 5}
    assert first.task == "fix the paging bug in paging.py\nthe last item is repeated"
    calls = first.tool_calls
    assert [(c.name, c.input.get("path") or c.input.get("command"), c.ok) for c in calls] == [
        ("edit", "paging.py", True), ("edit", "notes.md", False), ("shell", "pytest -q", True),
        ("shell", "pytest -q", False), ("shell", "git status", True)]
    assert calls[0].input["edits"] == [{"old_string": "    return items[n:n + 11]\n",
                                        "new_string": "    return items[n:n + 10]\n"}]
    assert calls[2].output is None and calls[3].exit_code == 1  # aider adds /test output only on failure
    assert (first.usage.input_tokens, first.usage.cache_read_tokens, first.usage.output_tokens) == (1300, 1100, 104)
    assert first.usage.cost == 0.0042 and first.git_commits == ["1b2614a"]
    assert first.outcome.status == OutcomeStatus.FAILURE
    assert _kinds(second) == {"user": 1, "assistant": 1} and second.outcome.status == OutcomeStatus.UNKNOWN
    renamed = tmp_path / "notes" / "chat-log.md"
    renamed.parent.mkdir()
    renamed.write_text(AIDER_HISTORY)
    assert detect_format(renamed) == "aider" and read_trace_file(renamed).traces[0].cwd is None


def test_specstory_v2_export_blocks_become_steps_with_commands_paths_and_no_outcome(tmp_path: Path) -> None:
    path = tmp_path / "widgets" / ".specstory" / "history" / "2026-07-13_13-40-49Z-fix-the-flaky-test.md"
    path.parent.mkdir(parents=True)
    path.write_text(SPECSTORY_CLAUDE)
    assert detect_format(path) == "specstory"
    trace = read_trace_file(path).traces[0]
    assert trace.id == "specstory:5c7d5c23-0691-4467-b98e-0fb865b4a639" and trace.agent == "claude-code"
    assert (trace.model, trace.cwd, trace.started) == ("claude-opus-4-6", str(tmp_path / "widgets"),
                                                         "2026-07-13T13:40:49Z")
    assert _kinds(trace) == {"user": 1, "assistant": 3, "tool": 5}
    assert [c.name for c in trace.tool_calls] == ["Bash", "Read", "Edit", "Grep", "Bash"]
    bash = [c for c in trace.tool_calls if c.name == "Bash"]
    assert [c.input["command"] for c in bash] == ["pytest tests/ -q", "cd /home/dev/widgets\npytest tests/ -q"]
    assert (bash[0].exit_code, bash[0].ok, bash[1].ok, bash[1].output) == (1, False, True, "4 passed")
    assert trace.tool_calls[1].input["path"] == "src/app.py"  # `./src/app.py` as the export wrote it
    assert trace.tool_calls[2].input == {"path": "src/app.py", "recorded_path": "/home/dev/widgets/src/app.py"}
    assert trace.tool_calls[3].input == {"query": "flaky"}
    assert [s.sidechain for s in trace.steps if s.tool] == [False, False, False, True, False]
    assert trace.outcome.status == OutcomeStatus.UNKNOWN and trace.outcome.source == OutcomeSource.NONE


def test_specstory_older_export_without_generator_version_is_read_by_its_markers(tmp_path: Path) -> None:
    path = tmp_path / "export.md"
    path.write_text(SPECSTORY_CURSOR_LEGACY.replace("<!-- Generated by SpecStory -->\n", ""))
    assert detect_format(path) == "specstory"
    trace = read_trace_file(path).traces[0]
    assert _kinds(trace) == {"user": 1, "assistant": 2, "tool": 2}
    assert [(c.name, c.input.get("path"), c.input.get("command")) for c in trace.tool_calls] == [
        ("read_file", "src/router.ts", None), ("run_terminal_cmd", None, "npm test")]
    assert trace.started == "2025-03-05T10:00:00" and trace.meta["titles"] == ["Add a health endpoint"]
    assert [s.kind for s in trace.steps][0] == StepKind.USER and trace.task == "add a /health endpoint"


def test_plain_markdown_is_not_taken_for_an_agent_trace(tmp_path: Path) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("# Project\n\n> a quote\n\n#### Heading four\n\n_**bold italic**_ text\n")
    assert detect_format(notes) is None
    assert list(iter_trace_files([tmp_path])) == []


def test_cli_ingest_reads_every_new_format_and_no_secret_reaches_the_database(tmp_path: Path,
                                                                               habitus_home: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "copilot" / "c0ffee00" / "events.jsonl", copilot_events(SECRETS["github"]))
    write_jsonl(data / "gemini" / "chats" / "session-1.jsonl", gemini_records(SECRETS["aws"]))
    (data / "repo").mkdir(parents=True)
    (data / "repo" / ".aider.chat.history.md").write_text(
        AIDER_HISTORY.replace("the last item is repeated", f"the last item is repeated; key {SECRETS['openai']}"))
    (data / "repo" / ".specstory" / "history").mkdir(parents=True)
    (data / "repo" / ".specstory" / "history" / "s.md").write_text(SPECSTORY_CLAUDE)
    (data / "repo" / "README.md").write_text("# not a trace\n")
    env = {**os.environ, "HABITUS_HOME": str(habitus_home)}
    done = subprocess.run([sys.executable, "-m", "habitus", "ingest", str(data), "--json", "-q"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # copilot 9 steps / 5 calls, gemini 9 / 4, aider 8 / 5 and 2 / 0, specstory 9 / 5
    assert (report["files"], report["traces"], report["steps"], report["tool_calls"]) == (4, 5, 37, 19)
    assert report["errors"] == [] and report["redactions"] >= 3
    with open_store() as store:
        store.checkpoint()
        formats = sorted(t.source_format for t in store.iter_traces())
    assert formats == ["aider", "aider", "copilot", "gemini", "specstory"]
    blobs = b"".join(p.read_bytes() for p in habitus_home.glob("habitus.db*"))
    for secret in (SECRETS["github"], SECRETS["aws"], SECRETS["openai"]):
        assert secret.encode() not in blobs


def test_doctor_finds_and_ingest_reads_the_new_agents_default_folders(tmp_path: Path, habitus_home: Path,
                                                                      monkeypatch) -> None:
    copilot_home, gemini_home, project = tmp_path / "copilot", tmp_path / "ghome", tmp_path / "shop"
    write_jsonl(copilot_home / "session-state" / "c0ffee00" / "events.jsonl", copilot_events())
    (copilot_home / "session-state" / "c0ffee00" / "workspace.yaml").parent.mkdir(parents=True, exist_ok=True)
    (copilot_home / "session-state" / "c0ffee00" / "workspace.yaml").write_text("cwd: /home/dev/shop\n")
    chats = gemini_home / ".gemini" / "tmp" / "shop" / "chats"
    write_jsonl(chats / "session-2026-10-09T10-13-9b1f0c2e.jsonl", gemini_records())
    (chats.parent / "logs.json").write_text(json.dumps([{"sessionId": "x", "message": "a log, not a recording"}]))
    (project / ".specstory" / "history").mkdir(parents=True)
    (project / ".specstory" / "history" / "2026-07-13_13-40-49Z-fix.md").write_text(SPECSTORY_CLAUDE)
    (project / ".aider.chat.history.md").write_text(AIDER_HISTORY)
    homes = {"CLAUDE_CONFIG_DIR": str(tmp_path / "none"), "CODEX_HOME": str(tmp_path / "none"),
             "COPILOT_HOME": str(copilot_home), "GEMINI_CLI_HOME": str(gemini_home)}
    for name, value in homes.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(project)
    from typer.testing import CliRunner

    from habitus.cli.main import app

    doctor = json.loads(CliRunner().invoke(app, ["doctor", "--json"]).stdout)
    assert [(loc["agent"], loc["exists"], loc["files"]) for loc in doctor["trace_locations"]] == [
        ("claude-code", False, 0), ("codex", False, 0), ("copilot-cli", True, 1), ("gemini-cli", True, 1),
        ("specstory", True, 1), ("aider", True, 1)]
    env = {**os.environ, "HABITUS_HOME": str(habitus_home), **homes}
    done = subprocess.run([sys.executable, "-m", "habitus", "ingest", "--json", "-q"], capture_output=True,
                          text=True, env=env, timeout=120, cwd=project)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["files"], report["traces"], report["files_ignored"], report["errors"]) == (4, 5, 0, [])


def test_lines_with_fields_of_the_wrong_type_are_skipped_and_counted_and_the_rest_is_read(tmp_path: Path) -> None:
    events = copilot_events()
    events[6]["data"]["toolRequests"] = {"not": "a list"}  # the first answer's requests: known from their runs
    events[12]["timestamp"] = 12345
    events[12]["data"]["outputTokens"] = "lots"
    events.insert(3, {"type": ["session", "start"], "data": {}})
    result = read_trace_file(write_jsonl(tmp_path / "events.jsonl", events))
    trace = result.traces[0]
    assert not result.errors and result.skipped_lines == 1
    assert [c.name for c in trace.tool_calls] == ["view", "bash", "edit", "view", "bash"]
    assert all(c.output is not None for c in trace.tool_calls)
    answer = next(st for st in trace.steps if st.text == "The slice is one too long.")
    assert answer.timestamp is None and answer.usage.output_tokens == 0
    records = gemini_records()
    records[4]["toolCalls"] = "broken"
    records[5]["thoughts"] = [{"subject": ["x"], "description": None}]
    records.insert(2, {"$set": {"messages": "not a list", "summary": 7}})
    result = read_trace_file(write_jsonl(tmp_path / "session-x.jsonl", records))
    trace = result.traces[0]
    assert not result.errors and trace.meta.get("titles") == ["Fix the paging off-by-one"]
    assert [c.name for c in trace.tool_calls] == ["replace", "read_file", "run_shell_command"]
