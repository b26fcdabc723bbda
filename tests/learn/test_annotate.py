"""The optional LLM annotator, against a stub OpenAI-compatible server on 127.0.0.1 (a stub, not a model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from habitus.core.workflow import Place, Workflow, WorkflowStep
from habitus.learn.annotate import acceptable_step, annotate_workflows, apply_annotation
from habitus.llm.providers import get_provider
from stub_chat_api import chat_completion, chat_stub


@contextmanager
def stub_openai(content: dict[str, Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A stub OpenAI-compatible chat endpoint on 127.0.0.1 that answers `content` as JSON and records requests."""
    answer = chat_completion(json.dumps(content), id="x", model="stub")
    with chat_stub(lambda _body: (200, answer)) as stub:
        yield f"{stub.url}/v1", stub.requests


def _wf() -> Workflow:
    return Workflow(id="w", name="Add keyboard shortcut", steps=[
        WorkflowStep(do='Add at `SHORTCUTS` (web/src/shortcuts.ts), like `{ key: "{key}" }`',
                     place=Place("web/src/shortcuts.ts", ["SHORTCUTS"])),
        WorkflowStep(do="Add at `## Shortcuts` (docs/shortcuts.md), like `| {key} | {label} |`",
                     place=Place("docs/shortcuts.md", ["## Shortcuts"]))])


def test_model_names_and_polishes_but_cannot_drop_blanks_or_invent_files():
    answer = {"name": "Register a keyboard shortcut", "steps": [
        {"step": 1, "do": 'Register `{ key: "{key}" }` in the `SHORTCUTS` table of web/src/shortcuts.ts'},
        {"step": 2, "do": "Document the shortcut in docs/other.md"},        # invents a file, drops blanks
        {"step": 9, "do": "no such step"}]}
    with stub_openai(answer) as (url, requests):
        provider = get_provider("openai", base_url=url, api_key="k", model="stub", cache=False)
        wf = _wf()
        summary = annotate_workflows([wf], provider)
        assert requests[0]["response_format"]["type"] == "json_schema"
    assert summary == {"calls": 1, "named": 1, "steps": 1, "refused": 2, "skipped": None}
    assert wf.name == "Register a keyboard shortcut" and wf.extra["learned_name"] == "Add keyboard shortcut"
    assert wf.steps[0].do.startswith("Register")
    assert wf.steps[1].do == _wf().steps[1].do
    assert [s.place for s in wf.steps] == [s.place for s in _wf().steps]


def test_without_a_model_nothing_changes():
    wf = _wf()
    summary = annotate_workflows([wf])  # HABITUS_LLM=none in tests
    assert summary["calls"] == 0 and summary["skipped"]
    assert wf.to_dict() == _wf().to_dict()


def test_acceptable_step_rules():
    assert acceptable_step("Add `{x}` in a.py", "In a.py, add `{x}`")
    assert not acceptable_step("Add `{x}` in a.py", "Add it in a.py")
    assert not acceptable_step("Add `{x}` in a.py", "Add `{x}` in b.py")
    assert not acceptable_step("Add `{x}`", "")


def test_broken_answers_change_nothing():
    wf = _wf()
    assert apply_annotation(wf, "not json") == {"name": 0, "steps": 0, "refused": 0}
    assert apply_annotation(wf, {"name": "x" * 200, "steps": [{"step": "1", "do": 3}]})["refused"] == 1
    assert wf.name == "Add keyboard shortcut"
