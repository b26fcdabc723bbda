"""habitus never learns from its own injected text: hand-overs and warnings are set apart from the user's words.

Minimal fixtures in the shapes the real CLIs write (seen in transcripts of tests/clients): Claude Code
2.1.332 records hook context as an `attachment` line (`hook_additional_context`) and renders it for
the model inside `<system-reminder>` as `UserPromptSubmit hook additional context: …`; older Claude
Code put hook output in the user turn as `<user-prompt-submit-hook>…`; Codex 0.171 records it as a
developer message whose metadata says `hooks.additional_context`. A person may paste a hand-over too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from habitus.capture import read_trace_file
from habitus.core import StepKind
from habitus.core.injected import HANDOVER_MARK, is_injected, strip_injected
from habitus.core.workflow import Place, Workflow, WorkflowStep
from habitus.learn.tasks import segment_tasks
from habitus.recall.handover import HEAD
from habitus.recall.render import SelectedWorkflow, render

HANDOVER = (f"{HANDOVER_MARK}what earlier runs learned for this task\nHints from memory, checked against the current "
            "working tree; verify before relying on them.\n\n## 1. Add a users column\nSteps:\n1. Append the "
            "migration to `MIGRATIONS` at `db/migrations.py:1`\nPitfalls:\n- Seen in past runs (quoted, not an "
            "instruction): `make test` fails before `make migrate`")
PITFALL = ("habitus pitfall warning (this went wrong in past runs of this repo):\n- `make test` fails before "
           "`make migrate` (workflow: `Add a users column`)")
HANDOVER_WORDS = ("habitus", "Hints", "relying", "MIGRATIONS", "Pitfalls")


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _claude_user(content: object, n: int) -> dict:
    return {"type": "user", "sessionId": "s1", "uuid": f"u{n}", "timestamp": f"2026-12-01T04:39:3{n}Z",
            "cwd": "/repo", "message": {"role": "user", "content": content}}


def _claude_attachment(text: str, hook: str, n: int) -> dict:
    return {"type": "attachment", "sessionId": "s1", "uuid": f"a{n}", "timestamp": f"2026-12-01T04:39:3{n}Z",
            "attachment": {"type": "hook_additional_context", "content": [text], "hookName": hook,
                           "toolUseID": "hook-1", "hookEvent": hook},
            "rendered": [{"content": f"<system-reminder>\n{hook} hook additional context: {text}\n</system-reminder>"}]}


def _codex_message(role: str, text: str, hook: bool = False) -> dict:
    payload = {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}
    if hook:
        payload["internal_chat_message_metadata_passthrough"] = {"content_item_kinds": ["hooks.additional_context"]}
    return {"timestamp": "2026-12-01T04:39:30Z", "type": "response_item", "payload": payload}


def _own_words(trace) -> str:  # noqa: ANN001 - a Trace
    return "\n".join([trace.task] + [s.text for s in trace.steps if s.kind in (StepKind.USER, StepKind.SUMMARY)])


@pytest.mark.parametrize(("text", "own"), [
    (f"add a phone column\n\n{HANDOVER}", "add a phone column"),
    (f"fix the login\n<system-reminder>\nUserPromptSubmit hook additional context: {HANDOVER}\n</system-reminder>\n"
     "and keep the API", "fix the login\nand keep the API"),
    (f"<user-prompt-submit-hook>{HANDOVER}</user-prompt-submit-hook>\nrename the users table",
     "rename the users table"),
    (f"{PITFALL}\nthen add the index", "then add the index"),
    ("habitus: before editing `db/migrations.py`: run `make migrate` first\nok, edit it", "ok, edit it"),
    ("habitus: memory says `a.py` moved to `b.py`; edit it there.", ""),
    ("what does habitus: memory say about this?", "what does habitus: memory say about this?"),
    ("# habitus is a tool\nexplain it", "# habitus is a tool\nexplain it"),
])
def test_strip_injected_keeps_the_users_own_words(text: str, own: str) -> None:
    assert strip_injected(text) == own
    assert is_injected(text) == (own == "")


def test_every_text_habitus_injects_carries_a_mark_capture_recognises() -> None:
    wf = Workflow(id="wf-1", name="Add a users column", steps=[WorkflowStep(do="Append the migration",
                                                                              place=Place(file="db/migrations.py"))],
                  checks=["make migrate && make test"])
    rendered = render([SelectedWorkflow(workflow=wf, why="users table", kept_steps=[1])], 2000)
    assert rendered and is_injected(rendered)
    assert is_injected(HEAD + "\n\n## Where to look\n- `db/migrations.py`")
    assert is_injected("habitus pitfall warning (this went wrong in past runs of this repo):\n- x")


def test_claude_hook_attachments_are_system_steps_and_never_the_task(tmp_path: Path) -> None:
    path = _write(tmp_path / "s1.jsonl", [
        _claude_user("add a phone column to the users table", 0),
        _claude_attachment(HANDOVER, "UserPromptSubmit", 1),
        _claude_attachment(PITFALL, "PostToolUseFailure:Bash", 2),
        {"type": "api-request-blob", "hash": "x", "message": {"role": "user", "content": HANDOVER}},
    ])
    result = read_trace_file(path)
    (trace,) = result.traces
    assert trace.task == "add a phone column to the users table"
    hooks = [(s.kind, s.meta.get("hook"), s.meta.get("injected")) for s in trace.steps[1:]]
    assert hooks == [(StepKind.SYSTEM, "UserPromptSubmit", "habitus"),
                     (StepKind.SYSTEM, "PostToolUseFailure:Bash", "habitus")]
    assert not result.unknown_types  # attachments and request blobs are known bookkeeping


def test_hand_over_inside_a_claude_user_turn_is_set_apart_and_nothing_is_lost(tmp_path: Path) -> None:
    path = _write(tmp_path / "s1.jsonl", [
        _claude_user(f"<user-prompt-submit-hook>{HANDOVER}</user-prompt-submit-hook>", 0),
        _claude_user([{"type": "text", "text": "add a phone column to the users table"},
                      {"type": "text", "text": f"<system-reminder>\nUserPromptSubmit hook additional context: "
                                               f"{HANDOVER}\n</system-reminder>"}], 1),
        _claude_user(f"add a birthday column to the users table with a default date\n\n{HANDOVER}", 2),
    ])
    (trace,) = read_trace_file(path).traces
    kinds = [(s.kind.value, s.meta.get("injected")) for s in trace.steps]
    assert kinds == [("system", "habitus"), ("user", None), ("system", "habitus"), ("user", None),
                     ("system", "habitus")]
    assert trace.task == "add a phone column to the users table"
    assert [t.prompt for t in segment_tasks(trace)] == ["add a phone column to the users table",
                                                        "add a birthday column to the users table with a default date"]
    assert not any(word in _own_words(trace) for word in HANDOVER_WORDS)
    assert all(HANDOVER in s.text for s in trace.steps if s.kind == StepKind.SYSTEM)  # the record as written


def test_codex_hook_context_is_a_system_step_even_from_the_user_role(tmp_path: Path) -> None:
    path = _write(tmp_path / "rollout-2026-12-01T04-39-30-01a22fe6-9520-7353-9b70-d4a1a51ac579.jsonl", [
        {"timestamp": "2026-12-01T04:39:30Z", "type": "session_meta",
         "payload": {"id": "01a22fe6-9520-7353-9b70-d4a1a51ac579", "cwd": "/repo", "cli_version": "0.171.0"}},
        _codex_message("user", HANDOVER, hook=True),  # SessionStart context, before the first prompt
        _codex_message("user", "add a phone column to the users table"),
        _codex_message("developer", PITFALL, hook=True),
        _codex_message("user", f"also an index on phone\n\n{HANDOVER}"),  # a pasted hand-over
    ])
    (trace,) = read_trace_file(path).traces
    steps = [(s.kind.value, s.meta.get("hook_context"), s.meta.get("injected")) for s in trace.steps]
    assert steps == [("system", True, "habitus"), ("user", None, None), ("system", True, "habitus"),
                     ("user", None, None), ("system", None, "habitus")]
    assert trace.task == "add a phone column to the users table"
    assert [s.text for s in trace.steps if s.kind == StepKind.USER][1] == "also an index on phone"
    assert not any(word in _own_words(trace) for word in HANDOVER_WORDS)
