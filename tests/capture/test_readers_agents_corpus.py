"""Copilot CLI and aider readers over the real files in ../shared/corpus (copilot-cli/, other_agents/aider/),
checked against facts counted here directly from the raw files (not through the readers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from habitus.capture import detect_format, read_trace_file
from habitus.core import OutcomeStatus


def _copilot_facts(path: Path) -> dict[str, int]:
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    answers = [e["data"] for e in events if e["type"] == "assistant.message"]
    completes = [e["data"] for e in events if e["type"] == "tool.execution_complete"]
    shell_codes = [int(m.group(1)) for c in completes if c.get("result")
                   for m in [re.search(r"exit code (-?\d+)>\s*$", c["result"]["content"])] if m]
    return {
        "user": sum(1 for e in events if e["type"] == "user.message"),
        "assistant": sum(bool(a.get("content", "").strip()) + bool((a.get("reasoningText") or "").strip())
                         for a in answers),
        "system": sum(1 for e in events if e["type"] == "abort"),
        "calls": sum(len(a["toolRequests"]) for a in answers),
        "failed": sum(1 for c in completes if not c["success"]) + sum(1 for code in shell_codes if code != 0),
        "output": sum(a.get("outputTokens", 0) for a in answers),
    }


@pytest.mark.parametrize(("name", "calls"), [("copilot-d88be769afd1.jsonl", 61), ("copilot-db325365b92c.jsonl", 0)])
def test_copilot_cli_corpus_sessions_exact_counts(corpus: Path, name: str, calls: int) -> None:
    path = corpus / "copilot-cli" / name
    facts = _copilot_facts(path)
    assert facts["calls"] == calls
    assert detect_format(path) == "copilot"
    result = read_trace_file(path)
    assert result.format == "copilot" and not result.errors and result.skipped_lines == 0
    trace = result.traces[0]
    kinds = {k: sum(1 for s in trace.steps if s.kind.value == k) for k in ("user", "assistant", "tool", "system")}
    assert kinds == {"user": facts["user"], "assistant": facts["assistant"], "tool": facts["calls"],
                     "system": facts["system"]}
    assert len(trace.tool_calls) == facts["calls"]
    assert all(c.output is not None for c in trace.tool_calls), "every request is paired with its completion"
    assert sum(1 for c in trace.tool_calls if not c.ok) == facts["failed"]
    assert trace.cwd and trace.git_branch and len(trace.git_commits) == 1 and trace.task
    assert trace.outcome.status == OutcomeStatus.UNKNOWN  # neither session ran a check after its last edit


def test_copilot_cli_corpus_counts_and_usage_as_recorded(corpus: Path) -> None:
    big = read_trace_file(corpus / "copilot-cli" / "copilot-d88be769afd1.jsonl").traces[0]
    assert (len(big.steps), len(big.tool_calls)) == (124, 61)
    assert big.model == "claude-opus-4.8"
    assert big.usage.output_tokens == _copilot_facts(corpus / "copilot-cli" / "copilot-d88be769afd1.jsonl")["output"]
    assert big.usage.input_tokens == 0 and "no session.shutdown" in big.meta["usage_source"]  # aborted: no totals
    assert "input tokens not recorded" in big.meta["usage_incomplete"]  # so its cost is shown as a lower bound
    small = read_trace_file(corpus / "copilot-cli" / "copilot-db325365b92c.jsonl").traces[0]
    assert (len(small.steps), len(small.tool_calls)) == (2, 0)
    assert small.model == "gpt-5.3-codex-spark" and small.meta["selected_model"] == "gpt-5"
    assert small.meta["usage_by_model"]["gpt-5.3-codex-spark"]["requests"] == 1


def test_aider_corpus_history_exact_counts(corpus: Path) -> None:
    path = corpus / "other_agents" / "aider" / "metadata-aider.aider.chat.history.md"
    lines = path.read_text(encoding="utf-8").splitlines()
    user_messages = sum(1 for i, line in enumerate(lines)
                        if line.startswith("####") and (i == 0 or not lines[i - 1].startswith("####")))
    applied = [line[len("> Applied edit to "):].strip() for line in lines if line.startswith("> Applied edit to ")]
    commits = [line.split()[2] for line in lines if re.match(r"> Commit [0-9a-f]{7}", line)]
    token_lines = [line for line in lines if line.startswith("> Tokens: ")]
    assert detect_format(path) == "aider"
    result = read_trace_file(path)
    assert result.format == "aider" and len(result.traces) == 1 and not result.errors
    trace = result.traces[0]
    assert (user_messages, len(applied), len(commits), len(token_lines)) == (12, 18, 14, 12)
    assert sum(1 for s in trace.steps if s.kind.value == "user") == user_messages
    assert [c.input["path"] for c in trace.tool_calls] == applied
    assert all(c.name == "edit" and c.ok for c in trace.tool_calls)
    assert sum(len(c.input["edits"]) for c in trace.tool_calls) == sum(1 for ln in lines if ln == "<<<<<<< SEARCH")
    assert trace.git_commits == commits
    assert sum(1 for s in trace.steps if s.usage) == len(token_lines)
    assert trace.usage.cost == pytest.approx(sum(float(re.search(r"\$([\d.]+) message", t).group(1))
                                                 for t in token_lines))
    assert (len(trace.steps), trace.model, trace.meta["agent_version"]) == (42, "openrouter/openai/gpt-4o-mini",
                                                                            "0.86.1")
    assert trace.outcome.status == OutcomeStatus.UNKNOWN  # aider does not record command output
