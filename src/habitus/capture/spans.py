"""Reader for SkillRefiner span JSONL (`{trace_id, spans:[{span_id, name, input_text, output_text, …}]}`).

The outcome comes from a `binary_rewards.json` (`{trace_id: bool}`) beside the file or given by the
caller (source `rewards`), and feedback from an optional ground-truth map (`{trace_id: text}`).
A span whose text is a `USER:` / `ASSISTANT: [tool call] name({...})` / `TOOL:` transcript (blocks
separated by `---` lines, as OpenHands-style harnesses write them) is parsed into steps; other
spans become one message or tool step each. The same transcript parser reads a plain-text
transcript file (`raw_content.txt`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from habitus.capture.common import (
    ReadResult,
    exit_code_in,
    finish_trace,
    iter_json_lines,
    make_tool_output,
    parse_json_object,
    tool_step,
)
from habitus.capture.guard import LineGuard, ident, load_json, read_bounded, text_or_none
from habitus.core import Outcome, OutcomeSource, OutcomeStatus, Step, StepKind, ToolCall, Trace

REWARDS_FILE = "binary_rewards.json"
TRANSCRIPT_LIMIT = 256 << 20  # a plain-text transcript is read whole; larger ones are refused with a reason
MAP_LIMIT = 64 << 20  # rewards and ground-truth maps
_ROLE = re.compile(r"^(USER|ASSISTANT|TOOL|SYSTEM):[ \t]?")
_TOOL_CALL = re.compile(r"\[tool call\] ([\w.\-]+)\(")
_ELIDED = re.compile(r"\n*\.\.\. \[middle of trace elided[^\]]*\] \.\.\.\n*")
_SCORING = "SCORING REFERENCE"
_TRANSCRIPT_START = re.compile(r"^(USER|ASSISTANT|SYSTEM):", re.MULTILINE)


def load_rewards(path: Path | str) -> dict[str, bool]:
    """Read a `{trace_id: bool}` rewards file."""
    data = load_json(read_bounded(path, MAP_LIMIT).decode("utf-8", errors="replace"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: rewards file must be a JSON object of trace_id -> bool")
    return {str(k): bool(v) for k, v in data.items()}


def load_ground_truth(source: Path | str | dict[str, Any] | None) -> dict[str, str]:
    """A `{trace_id: feedback}` map from a dict, a JSON file, or a JSONL file of `{trace_id, …}` lines."""
    if source is None:
        return {}
    if isinstance(source, dict):
        return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in source.items()}
    text = read_bounded(source, MAP_LIMIT).decode("utf-8", errors="replace")
    try:
        data = load_json(text)
    except ValueError:
        data = {}
        for line in text.splitlines():
            try:
                row = load_json(line)
            except ValueError:
                continue
            if isinstance(row, dict) and row.get("trace_id"):
                data[str(row["trace_id"])] = row.get("ground_truth") or row.get("feedback") or row
    return load_ground_truth(data if isinstance(data, dict) else {})


def read_spans(path: Path, *, start: int = 0, rewards: dict[str, bool] | None = None,
               ground_truth: dict[str, str] | None = None) -> ReadResult:
    """Read a span JSONL file; each line is one trace."""
    result = ReadResult(format="spans")
    if rewards is None:
        sibling = path.parent / REWARDS_FILE
        rewards = {}
        if sibling.is_file():
            try:
                rewards = load_rewards(sibling)
            except (OSError, ValueError) as exc:
                result.errors.append({"path": str(sibling), "message": f"rewards file ignored: {exc}"})
    ground_truth = ground_truth or {}
    guard = LineGuard(result, "spans")
    for line in iter_json_lines(path, result, start):
        with guard:
            spans = line.get("spans")
            trace_id = ident(line.get("trace_id"))
            if not trace_id or not isinstance(spans, list):
                result.skipped_lines += 1
                result.unknown_types["spans:<no trace_id/spans>"] += 1
                continue
            trace = Trace(id=trace_id, source_format="spans",
                          agent=text_or_none(line.get("agent")) or "skillrefiner", session_id=trace_id,
                          source_path=str(path))
            for span in spans:
                if isinstance(span, dict):
                    _read_span(trace, span)
            for key in ("model", "task"):
                if isinstance(line.get(key), str):
                    setattr(trace, key, line[key])
            _apply_outcome(trace, rewards, ground_truth)
            result.traces.append(finish_trace(trace))
    return result


def read_transcript(path: Path, *, rewards: dict[str, bool] | None = None,
                    ground_truth: dict[str, str] | None = None) -> ReadResult:
    """Read one plain-text USER/ASSISTANT/TOOL transcript; the trace id is its folder's name."""
    result = ReadResult(format="transcript")
    data = read_bounded(path, TRANSCRIPT_LIMIT)
    result.offset = len(data)
    text = data.decode("utf-8", errors="replace")
    trace_id = path.parent.name if path.stem in ("raw_content", "transcript") else path.stem
    trace = Trace(id=trace_id, source_format="transcript", agent="openhands", session_id=trace_id,
                  source_path=str(path))
    trace.steps.extend(parse_transcript(text))
    result.lines = text.count("\n") + 1
    _apply_outcome(trace, rewards or {}, ground_truth or {})
    result.traces.append(finish_trace(trace))
    return result


def looks_like_transcript(text: str) -> bool:
    return bool(_TRANSCRIPT_START.search(text[:4000])) and "\n---\n" in text


def _apply_outcome(trace: Trace, rewards: dict[str, bool], ground_truth: dict[str, str]) -> None:
    if trace.id in rewards:
        status = OutcomeStatus.SUCCESS if rewards[trace.id] else OutcomeStatus.FAILURE
        trace.outcome = Outcome(status=status, source=OutcomeSource.REWARDS)
    feedback = ground_truth.get(trace.id)
    if feedback is None:
        scoring = [s.text for s in trace.steps if s.meta.get("scoring_reference")]
        feedback = scoring[-1] if scoring else None
    if feedback:
        trace.outcome.feedback = feedback


def _read_span(trace: Trace, span: dict[str, Any]) -> None:
    name = text_or_none(span.get("name")) or "span"
    stamp = text_or_none(span.get("start_time"))
    input_text = span.get("input_text") if isinstance(span.get("input_text"), str) else ""
    output_text = span.get("output_text") if isinstance(span.get("output_text"), str) else ""
    if "tool" in name.lower() and name != "agent_rollout":
        step = tool_step(text_or_none(span.get("tool_name")) or name,
                         parse_json_object(input_text) if input_text else {}, ident(span.get("span_id")), stamp,
                         meta={"span": name})
        make_tool_output(step.tool, output_text)  # type: ignore[arg-type]
        trace.steps.append(step)
        return
    if input_text.strip():
        trace.steps.append(Step(kind=StepKind.USER, text=input_text, timestamp=stamp, meta={"span": name}))
    if looks_like_transcript(output_text):
        steps = parse_transcript(output_text)
        if steps and stamp:
            steps[0].timestamp = stamp
        trace.steps.extend(steps)
    elif output_text.strip():
        trace.steps.append(Step(kind=StepKind.ASSISTANT, text=output_text, timestamp=stamp, meta={"span": name}))
    if text_or_none(span.get("end_time")):
        trace.ended = span["end_time"]


def parse_transcript(text: str) -> list[Step]:
    """Steps of a `USER:` / `ASSISTANT:` / `TOOL:` transcript with `---` separators (and elided middles)."""
    steps: list[Step] = []
    parts = _ELIDED.split(text)
    for index, part in enumerate(parts):
        if index:
            steps.append(Step(kind=StepKind.SYSTEM, text="[middle of trace elided]", meta={"elided": True}))
        _parse_blocks(part, steps, continuation=index > 0)
    return steps


def _blocks(text: str) -> list[str]:
    blocks: list[str] = []
    for chunk in re.split(r"\n---\n", text):
        if blocks and not _ROLE.match(chunk) and not chunk.startswith(_SCORING):
            blocks[-1] += "\n---\n" + chunk  # a `---` inside a message, not a separator
        else:
            blocks.append(chunk)
    return blocks


def _parse_blocks(text: str, steps: list[Step], *, continuation: bool) -> None:
    pending: list[ToolCall] = []  # calls still waiting for their output, answered in order
    for number, block in enumerate(_blocks(text)):
        match = _ROLE.match(block)
        if block.startswith(_SCORING):
            steps.append(Step(kind=StepKind.SYSTEM, text=block.strip(), meta={"scoring_reference": True}))
            continue
        if match is None:
            if block.strip():
                steps.append(Step(kind=StepKind.SYSTEM, text=block.strip(),
                                  meta={"fragment": True} if continuation and number == 0 else {}))
            continue
        role, body = match.group(1), block[match.end():]
        if role == "TOOL":
            if pending:
                call = pending.pop(0)
            else:
                step = tool_step("", {}, None, None, meta={"orphan_result": True})
                steps.append(step)
                call = step.tool
            make_tool_output(call, body)
            call.exit_code = exit_code_in(body[-600:]) if body else None
            call.is_error = call.exit_code not in (None, 0)
        elif role == "ASSISTANT":
            pending.extend(_assistant_block(body, steps))
        else:
            steps.append(Step(kind=StepKind.USER if role == "USER" else StepKind.SYSTEM, text=body.strip()))


def _assistant_block(body: str, steps: list[Step]) -> list[ToolCall]:
    calls = list(_TOOL_CALL.finditer(body))
    if not calls:
        if body.strip():
            steps.append(Step(kind=StepKind.ASSISTANT, text=body.strip()))
        return []
    head = body[:calls[0].start()].strip()
    if head:
        steps.append(Step(kind=StepKind.ASSISTANT, text=head))
    made = []
    for i, match in enumerate(calls):
        end = calls[i + 1].start() if i + 1 < len(calls) else len(body)
        raw = body[match.end():end].rstrip()
        raw = raw[:-1] if raw.endswith(")") else raw
        step = tool_step(match.group(1), parse_json_object(raw), None, None)
        steps.append(step)
        made.append(step.tool)
    return made
