"""Flatten a Trace into the ordered events the summarizer reads: messages, commands and their results.

Readers give structured steps for most formats, but SkillRefiner spans carry the whole run as one
plain-text transcript (``USER:`` / ``ASSISTANT: [tool call] terminal({...})`` / ``TOOL:`` blocks
separated by ``---`` lines). Both shapes end up as the same `Event` list here, so behaviour
extraction has one input. The grader's ``SCORING REFERENCE`` block is outcome, not behaviour: it
is split off as the trace's diagnosis and never scanned for behaviours.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from habitus.core.trace import StepKind, Trace

_BLOCK_SPLIT = re.compile(r"\n-{3,}\n")
_ROLE = re.compile(r"^(USER|ASSISTANT|TOOL|SYSTEM):\s?", re.S)
_TOOL_CALL = re.compile(r"^\[tool call\]\s*([\w.\-]+)\((.*)\)\s*$", re.S)
_EXIT_CODE = re.compile(r"exit code (-?\d+)")
_COMMAND_FIELD = re.compile(r'"(?:command|cmd)"\s*:\s*"((?:[^"\\]|\\.)*)"', re.S)
_FINAL_TOOLS = {"finish", "final_answer", "submit", "attempt_completion"}
_DIAGNOSIS = re.compile(r"SCORING REFERENCE|EXPECTED GROUND-TRUTH ANSWER")


@dataclass
class Event:
    """One thing that happened in a run, in order."""

    role: str  # user | assistant | tool_call
    text: str = ""  # message text, or the tool's output for a tool_call
    tool: str | None = None
    command: str = ""  # the shell command (or a compact rendering of the tool input)
    summary: str = ""  # the agent's own one-line label for a call, when the harness records one
    exit_code: int | None = None
    is_error: bool = False


@dataclass
class Flattened:
    """A trace as events, plus the outcome diagnosis (grader verdict) kept apart from behaviour."""

    events: list[Event] = field(default_factory=list)
    diagnosis: str = ""

    @property
    def calls(self) -> list[Event]:
        return [e for e in self.events if e.role == "tool_call"]

    @property
    def final_message(self) -> str:
        for event in reversed(self.events):
            if event.role == "assistant" and event.text.strip():
                return event.text
        return ""


def looks_like_transcript(text: str) -> bool:
    return text.lstrip().startswith(("USER:", "ASSISTANT:")) or "\nASSISTANT:" in text


def _parse_call(body: str) -> Event | None:
    match = _TOOL_CALL.match(body.strip())
    if not match:
        return None
    name, raw_args = match.group(1), match.group(2)
    command, summary = "", ""
    try:
        args = json.loads(raw_args)
        if isinstance(args, dict) and name in _FINAL_TOOLS:
            message = args.get("message") or args.get("result") or args.get("summary") or ""
            return Event(role="assistant", text=str(message))
        if isinstance(args, dict):
            command = str(args.get("command") or args.get("cmd") or "")
            summary = str(args.get("summary") or "")
            if not command:
                command = json.dumps(args, sort_keys=True, ensure_ascii=False)[:2000]
    except (json.JSONDecodeError, ValueError):
        found = _COMMAND_FIELD.search(raw_args)  # garbled or cut JSON: take the command field if visible
        if found:
            try:
                command = json.loads(f'"{found.group(1)}"')
            except json.JSONDecodeError:
                command = found.group(1)
        else:
            command = raw_args[:2000]
    return Event(role="tool_call", tool=name, command=command, summary=summary)


def parse_transcript(text: str) -> Flattened:
    """Parse a plain-text USER/ASSISTANT/TOOL transcript into events (lenient: odd blocks are skipped)."""
    out = Flattened()
    for block in _BLOCK_SPLIT.split(text.replace("\r\n", "\n")):
        if _DIAGNOSIS.search(block) and not _ROLE.match(block):
            out.diagnosis = (out.diagnosis + "\n" + block.strip()).strip()
            continue
        role_match = _ROLE.match(block)
        if not role_match:
            if out.events and out.events[-1].role in ("user", "assistant"):
                out.events[-1].text += "\n" + block  # continuation (reminders, appended notes)
            continue
        role, body = role_match.group(1), block[role_match.end():]
        if role == "ASSISTANT":
            call = _parse_call(body)
            out.events.append(call if call else Event(role="assistant", text=body))
        elif role == "TOOL":
            pending = next((e for e in reversed(out.events) if e.role == "tool_call"), None)
            if pending is not None and not pending.text:
                pending.text = body
                codes = _EXIT_CODE.findall(body)
                if codes:
                    pending.exit_code = int(codes[-1])
                    pending.is_error = pending.exit_code != 0
        else:
            out.events.append(Event(role="user" if role == "USER" else "assistant", text=body))
    return out


def _tool_command(tool_input: dict) -> str:
    for key in ("command", "cmd", "script", "code"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value:
            words = [str(v) for v in value]
            if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and words[1] in ("-c", "-lc"):
                return words[-1]  # Codex wraps every command as ["bash", "-lc", "<command>"]
            return " ".join(words)
    return json.dumps(tool_input, sort_keys=True, ensure_ascii=False)[:2000]


def flatten_trace(trace: Trace) -> Flattened:
    """All events of a trace in order; transcript text inside steps is parsed in place."""
    out = Flattened()
    for step in trace.steps:
        if step.meta.get("scoring_reference"):
            out.diagnosis = (out.diagnosis + "\n" + step.text).strip()
            continue
        if step.tool is not None:
            call = step.tool
            if not call.name:  # a result with no recorded call
                continue
            if call.name in _FINAL_TOOLS:
                tool_input = call.input or {}
                message = tool_input.get("message") or tool_input.get("result") or call.output or ""
                out.events.append(Event(role="assistant", text=str(message)))
                continue
            out.events.append(Event(
                role="tool_call", tool=call.name, command=_tool_command(call.input or {}),
                summary=str((call.input or {}).get("summary") or (call.input or {}).get("description") or ""),
                text=call.output or "", exit_code=call.exit_code, is_error=not call.ok,
            ))
            continue
        if step.text and looks_like_transcript(step.text):
            parsed = parse_transcript(step.text)
            out.events.extend(parsed.events)
            if parsed.diagnosis:
                out.diagnosis = (out.diagnosis + "\n" + parsed.diagnosis).strip()
            continue
        if step.kind in (StepKind.USER, StepKind.ASSISTANT, StepKind.SYSTEM) and step.text:
            out.events.append(Event(role="user" if step.kind == StepKind.USER else "assistant", text=step.text))
    if trace.outcome.feedback and trace.outcome.feedback not in out.diagnosis:
        out.diagnosis = (out.diagnosis + "\n" + trace.outcome.feedback).strip()
    return out
