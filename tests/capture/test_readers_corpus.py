"""Every reader over the real public traces in ../shared/corpus, checked against facts counted here
directly from the raw files (not through the readers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from habitus.capture import detect_format, read_trace_file


def _claude_facts(path: Path) -> dict[str, int]:
    """Tool calls, failed results and usage (one per message id, last line wins) from the raw lines."""
    calls, failed = set(), 0
    usage_by_message: dict[str, dict] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        if line.get("type") == "progress" and line["data"].get("type") == "agent_progress":
            line = line["data"]["message"]  # Claude Code 2.1 carries a subagent's messages in progress lines
        message = line.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            if isinstance(message, dict) and message.get("usage") and line.get("type") == "assistant":
                usage_by_message[message["id"]] = message["usage"]
            continue
        for block in message["content"]:
            if block.get("type") == "tool_use":
                calls.add(block["id"])
            if block.get("type") == "tool_result" and block.get("is_error"):
                failed += 1
        if line.get("type") == "assistant" and message.get("usage"):
            usage_by_message[message["id"]] = message["usage"]
    tokens = {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0}
    for usage in usage_by_message.values():
        tokens["input"] += usage.get("input_tokens", 0)
        tokens["cache_read"] += usage.get("cache_read_input_tokens", 0)
        tokens["cache_write"] += usage.get("cache_creation_input_tokens", 0)
        tokens["output"] += usage.get("output_tokens", 0)
    return {"calls": len(calls), "failed": failed, **tokens}


def test_claude_reader_counts_calls_failures_and_deduplicated_tokens(corpus: Path) -> None:
    files = sorted((corpus / "claude_code").rglob("*.jsonl"))
    assert len(files) == 5
    for path in files:
        facts = _claude_facts(path)
        result = read_trace_file(path)
        assert result.format == "claude" and not result.errors, path
        assert len(result.traces) == 1
        trace = result.traces[0]
        calls = trace.tool_calls
        assert len(calls) == facts["calls"], path.name
        assert all(c.output is not None for c in calls), "every tool_use is paired with its tool_result"
        assert sum(1 for c in calls if c.is_error) == facts["failed"], path.name
        assert trace.usage.input_tokens == facts["input"], path.name
        assert trace.usage.cache_read_tokens == facts["cache_read"], path.name
        assert trace.usage.cache_write_tokens == facts["cache_write"], path.name
        assert trace.usage.output_tokens == facts["output"], path.name
        assert trace.cwd and trace.started and trace.ended and trace.task


def test_claude_sidechain_lines_stay_in_the_session_marked_as_subagent_steps(corpus: Path) -> None:
    path = next((corpus / "claude_code").rglob("fe5e1c67*.jsonl"))
    raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    task_calls = {b["id"] for line in raw if not line.get("isSidechain") and isinstance(line.get("message"), dict)
                  and isinstance(line["message"].get("content"), list)
                  for b in line["message"]["content"] if b.get("type") == "tool_use" and b["name"] == "Task"}
    trace = read_trace_file(path).traces[0]
    side = [s for s in trace.steps if s.sidechain]
    assert side and all(s.agent_id for s in side)
    assert len({s.agent_id for s in side}) == len(task_calls)  # one subagent chain per Task call
    assert trace.task.startswith("/orchestrator")  # the slash command, not its expansion


def _codex_exit(output: str) -> int:
    try:
        return json.loads(output).get("metadata", {}).get("exit_code", 0)
    except ValueError:
        return 0  # plain-text outputs ("Plan updated") of non-shell tools


def test_codex_reader_counts_calls_failures_and_takes_the_last_cumulative_tokens(corpus: Path) -> None:
    for path in sorted((corpus / "codex").rglob("*.jsonl")):
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        payloads = [line["payload"] for line in lines if line["type"] == "response_item"]
        n_calls = sum(1 for p in payloads if p["type"] == "function_call")
        failed = sum(1 for p in payloads if p["type"] == "function_call_output" and _codex_exit(p["output"]) != 0)
        totals = [line["payload"]["info"]["total_token_usage"] for line in lines
                  if line["type"] == "event_msg" and line["payload"]["type"] == "token_count"
                  and line["payload"].get("info")]
        trace = read_trace_file(path).traces[0]
        assert len(trace.tool_calls) == n_calls
        assert sum(1 for c in trace.tool_calls if not c.ok) == failed
        if totals:
            last = totals[-1]
            assert trace.usage.cache_read_tokens == last["cached_input_tokens"]
            assert trace.usage.input_tokens + trace.usage.cache_read_tokens == last["input_tokens"]
            assert trace.usage.output_tokens == last["output_tokens"]
            per_request = sum(s.usage.total_tokens for s in trace.steps if s.usage)
            assert 0 < per_request <= last["total_tokens"]
        else:
            assert trace.usage.total_tokens == 0
        assert trace.model and trace.cwd and trace.task


def test_codex_full_rollout_has_39_paired_shell_calls(corpus: Path) -> None:
    path = next((corpus / "codex").rglob("rollout-*.jsonl"))
    trace = read_trace_file(path).traces[0]
    assert len(trace.tool_calls) == 39
    assert all(c.output is not None for c in trace.tool_calls)
    shell = [c for c in trace.tool_calls if c.name == "shell"]
    assert shell and all(c.exit_code is not None for c in shell)
    assert trace.git_branch == "main" and trace.meta["git_remote"].endswith("chatbot-ui.git")


def test_span_reader_takes_outcomes_from_the_rewards_file_beside_it(corpus: Path) -> None:
    folder = corpus / "skillrefiner" / "examples" / "minimal"
    rewards = json.loads((folder / "binary_rewards.json").read_text())
    raw = [json.loads(x) for x in (folder / "traces.jsonl").read_text().splitlines()]
    result = read_trace_file(folder / "traces.jsonl")
    assert result.format == "spans"
    assert [t.id for t in result.traces] == [r["trace_id"] for r in raw]
    for trace, line in zip(result.traces, raw, strict=True):
        expected = "success" if rewards[trace.id] else "failure"
        assert (trace.outcome.status.value, trace.outcome.source.value) == (expected, "rewards")
        text = line["spans"][0]["output_text"]
        named = [c for c in trace.tool_calls if c.name]  # unnamed: a result whose call lies in the elided middle
        assert len(named) == len(re.findall(r"\[tool call\] [\w.-]+\(", text))
        assert trace.task.startswith("Below is the spreadsheet")


def test_span_reader_uses_given_rewards_and_ground_truth_over_the_sibling_file(corpus: Path) -> None:
    path = corpus / "skillrefiner" / "examples" / "minimal" / "traces.jsonl"
    first = json.loads(path.read_text().splitlines()[0])["trace_id"]
    result = read_trace_file(path, rewards={first: False}, ground_truth={first: "cell I12 expected 2, got 3"})
    trace = next(t for t in result.traces if t.id == first)
    assert trace.outcome.status.value == "failure"
    assert trace.outcome.feedback == "cell I12 expected 2, got 3"
    assert all(t.outcome.status.value == "unknown" for t in result.traces if t.id != first)


def test_transcript_reader_pairs_tool_calls_with_their_output_and_exit_codes(corpus: Path) -> None:
    files = sorted((corpus / "skillrefiner" / "golden").rglob("raw_content.txt"))
    assert len(files) == 14
    for path in files:
        text = path.read_text(encoding="utf-8")
        calls = len(re.findall(r"^ASSISTANT: \[tool call\] ", text, re.MULTILINE))
        nonzero = len(re.findall(r"^TOOL:(?:(?!\n---\n).)*?\[Command finished with exit code [1-9]\d*\]", text,
                                 re.MULTILINE | re.DOTALL))
        trace = read_trace_file(path).traces[0]
        assert detect_format(path) == "transcript"
        assert len(trace.tool_calls) == calls, path
        assert sum(1 for c in trace.tool_calls if c.exit_code not in (None, 0)) == nonzero, path
        if path.parts[-3] == "negative":
            assert "EXPECTED GROUND-TRUTH ANSWER" in (trace.outcome.feedback or "")


@pytest.mark.parametrize("folder, fmt", [("claude_code", "claude"), ("codex", "codex")])
def test_detect_format_recognises_each_corpus_folder(corpus: Path, folder: str, fmt: str) -> None:
    assert {detect_format(p) for p in (corpus / folder).rglob("*.jsonl")} == {fmt}


def test_non_trace_files_are_not_recognised(corpus: Path) -> None:
    assert detect_format(corpus / "skillrefiner" / "examples" / "minimal" / "binary_rewards.json") is None
    assert detect_format(corpus / "README.md") is None
