"""Reader behaviours pinned on small synthetic sessions: pairing, usage de-duplication, subagents,
Codex tool shapes, chat JSONL, and robustness against bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from capture_sessions import ClaudeSession, codex_lines, write_jsonl

from habitus.capture import OUTPUT_CAP_BYTES, detect_format, read_trace_file


def test_claude_usage_of_lines_sharing_a_message_id_is_counted_once(tmp_path: Path) -> None:
    s = ClaudeSession()
    s.user("add a flag")
    usage = {"input_tokens": 7, "cache_creation_input_tokens": 11, "cache_read_input_tokens": 13, "output_tokens": 17}
    s.assistant("msg_a", [{"type": "thinking", "thinking": "plan"}, {"type": "text", "text": "ok"}], usage)
    s.tool("msg_a", "Read", {"file_path": "/work/repo/a.py"}, "print(1)", usage=usage)
    trace = read_trace_file(s.write(tmp_path / "s.jsonl")).traces[0]
    assert (trace.usage.input_tokens, trace.usage.cache_write_tokens, trace.usage.cache_read_tokens,
            trace.usage.output_tokens) == (7, 11, 13, 17)
    assert sum(1 for st in trace.steps if st.usage) == 1
    assert trace.steps[1].meta["message_id"] == "msg_a" and trace.steps[1].meta["request_id"] == "req-msg_a"


def test_claude_last_line_of_a_response_carries_its_final_output_count(tmp_path: Path) -> None:
    s = ClaudeSession()
    s.user("go")
    s.assistant("msg_a", [{"type": "text", "text": "partial"}], {"input_tokens": 1, "output_tokens": 2})
    s.assistant("msg_a", [{"type": "text", "text": "rest"}], {"input_tokens": 1, "output_tokens": 90})
    trace = read_trace_file(s.write(tmp_path / "s.jsonl")).traces[0]
    assert trace.usage.output_tokens == 90 and trace.usage.input_tokens == 1


@pytest.mark.parametrize("code, ok", [(0, True), (1, False), (2, False)])
def test_claude_bash_exit_codes_come_from_the_result(tmp_path: Path, code: int, ok: bool) -> None:
    s = ClaudeSession()
    s.user("run tests")
    s.bash("m1", "pytest -q", "1 passed" if ok else "1 failed", code)
    call = read_trace_file(s.write(tmp_path / "s.jsonl")).traces[0].tool_calls[0]
    assert (call.exit_code, call.ok, call.output is not None) == (code, ok, True)


def test_claude_task_call_names_its_subagent_and_subagent_files_are_traces_of_their_own(tmp_path: Path) -> None:
    s = ClaudeSession(session_id="parent-1")
    s.user("explore")
    s.tool("m1", "Task", {"description": "look", "prompt": "find x"}, "found x", side={"agentId": "a1b2"})
    s.write(tmp_path / "proj" / "parent-1.jsonl")
    sub = ClaudeSession(session_id="parent-1")
    sub.user("find x")
    sub.tool("m2", "Grep", {"pattern": "x"}, "a.py:1:x")
    for line in sub.lines:
        line["isSidechain"], line["agentId"] = True, "a1b2"
    sub.write(tmp_path / "proj" / "parent-1" / "subagents" / "agent-a1b2.jsonl")
    parent = read_trace_file(tmp_path / "proj" / "parent-1.jsonl").traces[0]
    child = read_trace_file(tmp_path / "proj" / "parent-1" / "subagents" / "agent-a1b2.jsonl").traces[0]
    assert parent.tool_calls[0].subagent == "a1b2"
    assert child.id == "parent-1:a1b2" and child.meta["parent_session"] == "parent-1"
    assert all(st.sidechain and st.agent_id == "a1b2" for st in child.steps)


def test_claude_compaction_summary_and_meta_lines_are_not_the_task(tmp_path: Path) -> None:
    s = ClaudeSession()
    s.raw({"type": "summary", "summary": "Session title", "leafUuid": "x"})
    s._base("user", isMeta=True, message={"role": "user", "content": "Caveat: local commands below"})
    s._base("user", isCompactSummary=True, message={"role": "user", "content": "Summary of earlier work"})
    s.user("the real request")
    trace = read_trace_file(s.write(tmp_path / "s.jsonl")).traces[0]
    assert trace.task == "the real request"
    assert [st.kind.value for st in trace.steps] == ["system", "summary", "user"]
    assert trace.meta["titles"] == ["Session title"]


def test_codex_function_calls_custom_patch_calls_and_repeated_token_counts(tmp_path: Path) -> None:
    lines = codex_lines(calls=[("ls", "a.py", 0), ("pytest -q", "1 failed", 1)])
    lines.append({"timestamp": "t", "type": "response_item", "payload": {
        "type": "custom_tool_call", "name": "apply_patch", "call_id": "p1", "input": "*** Begin Patch\n"}})
    lines.append({"timestamp": "t", "type": "response_item", "payload": {
        "type": "custom_tool_call_output", "call_id": "p1",
        "output": json.dumps({"output": "Success. Updated: a.py", "metadata": {"exit_code": 0}})}})
    trace = read_trace_file(write_jsonl(tmp_path / "rollout.jsonl", lines)).traces[0]
    calls = trace.tool_calls
    assert [c.name for c in calls] == ["shell", "shell", "apply_patch"]
    assert [c.exit_code for c in calls] == [0, 1, 0]
    assert calls[2].input == {"input": "*** Begin Patch\n"}
    # two requests, each token_count written twice: cumulative total of the last, per-request on steps
    assert (trace.usage.input_tokens, trace.usage.cache_read_tokens, trace.usage.output_tokens) == (1000, 1000, 100)
    assert [st.usage.total_tokens for st in trace.steps if st.usage] == [1050, 1050]


def test_codex_plain_text_outputs_report_their_exit_code(tmp_path: Path) -> None:
    lines = codex_lines()
    output = "Exit code: 2\nWall time: 1s\nOutput:\nboom"
    lines += [{"timestamp": "t", "type": "response_item", "payload": {
        "type": "function_call", "name": "shell_command", "call_id": "c", "arguments": '{"command": "make test"}'}},
              {"timestamp": "t", "type": "response_item", "payload": {
                  "type": "function_call_output", "call_id": "c", "output": output}}]
    call = read_trace_file(write_jsonl(tmp_path / "r.jsonl", lines)).traces[0].tool_calls[0]
    assert call.exit_code == 2 and not call.ok


def test_chat_jsonl_pairs_tool_messages_and_keeps_the_given_outcome(tmp_path: Path) -> None:
    convo = {"id": "c1", "model": "gpt-4o", "outcome": {"status": "failure", "feedback": "wrong refund amount"},
             "messages": [
                 {"role": "system", "content": "You are support."},
                 {"role": "user", "content": "refund order 7"},
                 {"role": "assistant", "content": None, "usage": {"prompt_tokens": 100, "completion_tokens": 9},
                  "tool_calls": [{"id": "t1", "type": "function",
                                  "function": {"name": "lookup", "arguments": '{"order": 7}'}}]},
                 {"role": "tool", "tool_call_id": "t1", "content": "order 7: $20"},
                 {"role": "assistant", "content": "Refunded $25."}]}
    path = write_jsonl(tmp_path / "chats.jsonl", [convo, {"messages": [{"role": "user", "content": "hi"}]}])
    result = read_trace_file(path)
    assert detect_format(path) == "chat" and len(result.traces) == 2
    trace = result.traces[0]
    assert trace.task == "refund order 7"
    assert trace.tool_calls[0].input == {"order": 7} and trace.tool_calls[0].output == "order 7: $20"
    assert (trace.outcome.status.value, trace.outcome.source.value) == ("failure", "user")
    assert trace.usage.input_tokens == 100 and trace.usage.output_tokens == 9
    assert result.traces[1].id.startswith("chat-")


def test_unknown_line_types_and_blocks_are_counted_not_fatal(tmp_path: Path) -> None:
    s = ClaudeSession()
    s.user("go")
    s.raw({"type": "hologram", "sessionId": "sess-1"})
    s._base("assistant", message={"id": "m", "role": "assistant", "content": [{"type": "telepathy"}]})
    result = read_trace_file(s.write(tmp_path / "s.jsonl"))
    assert result.unknown_types["claude:hologram"] == 1
    assert result.unknown_types["claude:block:telepathy"] == 1
    assert result.skipped_lines == 1 and result.traces[0].task == "go"


def test_truncated_last_line_is_tolerated_and_left_for_the_next_read(tmp_path: Path) -> None:
    s = ClaudeSession()
    s.user("first")
    s.user("second")
    path = s.write(tmp_path / "s.jsonl")
    whole = path.stat().st_size
    with path.open("ab") as handle:
        handle.write(b'{"type": "user", "message": {"role": "us')
    result = read_trace_file(path)
    assert [st.text for st in result.traces[0].steps] == ["first", "second"]
    assert result.offset == whole and result.skipped_lines == 1


def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    line = json.dumps({"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user", "content": "caf@"}})
    path.write_bytes(line.encode().replace(b"@", b"\xff\xfe") + b"\n")
    trace = read_trace_file(path).traces[0]
    assert trace.task.startswith("caf") and "\ufffd" in trace.task


def test_huge_tool_outputs_are_capped_with_their_full_size_noted(tmp_path: Path) -> None:
    s = ClaudeSession()
    s.user("dump")
    big = "x" * (OUTPUT_CAP_BYTES * 3)
    s.bash("m1", "cat big.log", big)
    call = read_trace_file(s.write(tmp_path / "s.jsonl")).traces[0].tool_calls[0]
    assert call.output_truncated and call.output_size == len(big)
    assert len(call.output.encode()) < OUTPUT_CAP_BYTES + 200


@pytest.mark.parametrize("make", ["missing", "directory", "unreadable", "not-a-trace"])
def test_a_file_that_cannot_be_read_is_reported_not_raised(tmp_path: Path, make: str) -> None:
    path = tmp_path / "x.jsonl"
    if make == "directory":
        path.mkdir()
    elif make == "unreadable":
        path.write_text('{"type": "user"}\n')
        path.chmod(0)
        if os.access(path, os.R_OK):
            pytest.skip("running as a user who can read any file (root)")
    elif make == "not-a-trace":
        path.write_text('{"hello": "world"}\n')
    result = read_trace_file(path)
    assert result.traces == [] and len(result.errors) == 1 and result.errors[0]["path"] == str(path)
