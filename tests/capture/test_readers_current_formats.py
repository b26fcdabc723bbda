"""What the current CLIs write: Codex rollouts with `exec_command` / `write_stdin`, `custom_tool_call`
apply_patch, `shell_command`, tool search and server-side calls (shapes from openai/codex codex-rs:
protocol/src/models.rs `ResponseItem`, core/src/tools/handlers/unified_exec.rs `format_response`,
core/src/tools/mod.rs `format_exec_output_for_model_freeform`), and Claude Code 2.1 sessions whose
subagent messages ride in `progress` lines (`data.type: agent_progress`, as in the real 2.1.x
transcripts of ../shared/corpus/real-history)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capture_sessions import ClaudeSession, write_jsonl

from habitus.capture import read_trace_file
from habitus.core import OutcomeStatus

STAMP = "2026-11-02T09:00:00.000Z"
PATCH = ("*** Begin Patch\n*** Update File: paging.py\n@@\n-    return items[n:n + 11]\n"
         "+    return items[n:n + 10]\n*** End Patch\n")


def _item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": STAMP, "type": "response_item", "payload": payload}


def _event(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": STAMP, "type": "event_msg", "payload": payload}


def _exec(call_id: str, name: str, arguments: dict[str, Any], output: str) -> list[dict[str, Any]]:
    return [_item({"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call_id}),
            _item({"type": "function_call_output", "call_id": call_id, "output": output})]


def _tokens(total_in: int, last_in: int) -> dict[str, Any]:
    return _event({"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": total_in, "cached_input_tokens": 0, "output_tokens": 10},
        "last_token_usage": {"input_tokens": last_in, "cached_input_tokens": 0, "output_tokens": 10}}})


def current_codex_rollout(final_exit: int) -> list[dict[str, Any]]:
    """A 0.17x-style rollout: the test run after the patch is still running when first polled."""
    return [
        {"timestamp": STAMP, "type": "session_meta", "payload": {
            "id": "019b0000-0000-7000-8000-0000000000aa", "timestamp": STAMP, "cwd": "/home/dev/shop",
            "originator": "codex_cli_rs", "cli_version": "0.171.0", "source": "cli", "model_provider": "openai"}},
        {"timestamp": STAMP, "type": "turn_context", "payload": {"cwd": "/home/dev/shop", "model": "gpt-5.3-codex",
                                                                 "approval_policy": "on-request", "effort": "high"}},
        _event({"type": "task_started", "model_context_window": 272000}),
        _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix paging"}]}),
        _event({"type": "user_message", "message": "fix paging"}),
        _item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Run the tests."}],
               "encrypted_content": "gAAA"}),
        *_exec("c1", "exec_command", {"cmd": "pytest -q", "workdir": "/home/dev/shop", "yield_time_ms": 10000},
               "Chunk ID: 4f2a\nWall time: 1.2003 seconds\nProcess exited with code 1\nOriginal token count: 40\n"
               "Output:\n1 failed, 2 passed (the previous run exited with code 0)"),
        _event({"type": "exec_command_end", "call_id": "c1", "exit_code": 1}),
        _tokens(1000, 1000),
        _item({"type": "custom_tool_call", "status": "completed", "call_id": "c2", "name": "apply_patch",
               "input": PATCH}),
        _item({"type": "custom_tool_call_output", "call_id": "c2",
               "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n"
                         "M paging.py\n"}),
        _event({"type": "patch_apply_end", "call_id": "c2", "success": True}),
        *_exec("c3", "exec_command", {"cmd": "pytest -q"},
               "Chunk ID: 77b0\nWall time: 10.0012 seconds\nProcess running with session ID 7\n"
               "Original token count: 12\nOutput:\ncollecting ... (the last run exited with code 0)"),
        *_exec("c4", "write_stdin", {"session_id": 7, "chars": "", "yield_time_ms": 30000},
               f"Chunk ID: 9c1d\nWall time: 4.5000 seconds\nProcess exited with code {final_exit}\n"
               "Original token count: 8\nOutput:\n" + ("3 passed" if final_exit == 0 else "1 failed, 2 passed")),
        *_exec("c5", "shell_command", {"command": "git status --short", "workdir": "/home/dev/shop"},
               "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n M paging.py\n"),
        _item({"type": "local_shell_call", "call_id": "c6", "status": "completed",
               "action": {"type": "exec", "command": ["bash", "-lc", "ls"], "working_directory": "/home/dev/shop"}}),
        _item({"type": "function_call_output", "call_id": "c6", "output": "paging.py\ntests\n"}),
        _item({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "pytest -q"}}),
        _item({"type": "tool_search_call", "call_id": "c7", "execution": "client",
               "arguments": {"query": "calendar create", "limit": 1}}),
        _item({"type": "tool_search_output", "call_id": "c7", "execution": "client",
               "tools": [{"name": "calendar_create"}]}),
        _item({"type": "image_generation_call", "id": "ig_1", "status": "completed", "revised_prompt": "a chart",
               "result": "iVBORw0KGgo="}),
        _item({"type": "context_compaction", "encrypted_content": "gAAAB"}),
        _tokens(3000, 2000),
        {"timestamp": STAMP, "type": "turn_context", "payload": {"cwd": "/home/dev/shop",
                                                                 "model": "gpt-5.3-codex-spark"}},
        _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}),
        _tokens(3500, 500),
        _event({"type": "thread_rolled_back", "num_turns": 0}),
        _event({"type": "turn_complete", "last_agent_message": "Done."}),
    ]


def test_current_codex_items_are_read_with_exact_counts_and_nothing_unknown(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rollout-2026-11-02T09-00-00-019b0000-0000-7000-8000-0000000000aa.jsonl",
                       current_codex_rollout(final_exit=0))
    result = read_trace_file(path)
    assert result.format == "codex" and dict(result.unknown_types) == {} and result.skipped_lines == 0
    trace = result.traces[0]
    names = [c.name for c in trace.tool_calls]
    assert names == ["exec_command", "apply_patch", "exec_command", "write_stdin", "shell_command", "local_shell",
                     "web_search", "tool_search", "image_generation"]
    assert len(trace.steps) == 1 + 1 + 9 + 1  # prompt, reasoning, calls, answer
    assert all(c.output is not None for c in trace.tool_calls)
    codes = {c.call_id: c.exit_code for c in trace.tool_calls}
    # the exit code comes from the output header, never from the command's own text after "Output:"
    assert (codes["c1"], codes["c2"], codes["c3"], codes["c4"], codes["c5"]) == (1, 0, 0, 0, 0)
    assert trace.tool_calls[7].output == '[{"name": "calendar_create"}]'
    assert trace.outcome.status == OutcomeStatus.SUCCESS and "pytest -q" in (trace.outcome.feedback or "")
    assert trace.model == "gpt-5.3-codex" and trace.steps[-1].meta["model"] == "gpt-5.3-codex-spark"
    assert trace.usage.input_tokens == 3500 and trace.meta["agent_version"] == "0.171.0"


def test_a_test_run_that_fails_after_the_patch_makes_the_codex_outcome_a_failure(tmp_path: Path) -> None:
    trace = read_trace_file(write_jsonl(tmp_path / "r.jsonl", current_codex_rollout(final_exit=1))).traces[0]
    running = next(c for c in trace.tool_calls if c.call_id == "c3")
    assert running.exit_code == 1 and not running.ok  # told by the write_stdin poll that saw it exit
    assert trace.outcome.status == OutcomeStatus.FAILURE


def _progress(agent: str, message: dict[str, Any], n: int) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/work/repo",
            "sessionId": "sess-2-1", "version": "2.1.47", "gitBranch": "main", "type": "progress",
            "data": {"type": "agent_progress", "agentId": agent, "prompt": "find the flag", "normalizedMessages": [],
                     "message": message},
            "parentToolUseID": "toolu_task", "toolUseID": "agent_msg", "timestamp": STAMP, "uuid": f"p{n}"}


def test_claude_2_1_subagent_messages_in_progress_lines_become_sidechain_steps(tmp_path: Path) -> None:
    s = ClaudeSession(session_id="sess-2-1")
    s.user("where is the --verbose flag parsed?")
    s.assistant("m1", [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                        "input": {"description": "find flag", "prompt": "find the flag"}}])
    sub_usage = {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900,
                 "output_tokens": 7}
    s.raw(_progress("a7", {"type": "assistant", "timestamp": STAMP, "uuid": "s1", "requestId": "req_s",
                           "message": {"model": "claude-haiku-4-5-20251001", "id": "msg_sub", "role": "assistant",
                                       "content": [{"type": "tool_use", "id": "toolu_grep", "name": "Grep",
                                                    "input": {"pattern": "--verbose"}}],
                                       "usage": sub_usage}}, 1))
    s.raw(_progress("a7", {"type": "user", "timestamp": STAMP, "uuid": "s2", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_grep", "content": "cli.py:12: --verbose"}]}}, 2))
    s.raw({"type": "progress", "data": {"type": "hook_progress", "hookEvent": "PostToolUse"}, "uuid": "p3",
           "sessionId": "sess-2-1", "timestamp": STAMP})
    s._base("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_task",
                                                          "content": "cli.py line 12"}]},
            toolUseResult={"agentId": "a7", "status": "completed"})
    result = read_trace_file(s.write(tmp_path / "sess-2-1.jsonl"))
    trace = result.traces[0]
    assert [c.name for c in trace.tool_calls] == ["Task", "Grep"] and dict(result.unknown_types) == {}
    grep = next(st for st in trace.steps if st.tool and st.tool.name == "Grep")
    assert (grep.sidechain, grep.agent_id, grep.tool.output) == (True, "a7", "cli.py:12: --verbose")
    assert grep.meta["model"] == "claude-haiku-4-5-20251001" and trace.model == "claude-sonnet-4-5"
    assert trace.tool_calls[0].subagent == "a7"
    assert trace.usage.cache_read_tokens == 1000 + 900  # the subagent's requests are part of the session's usage
