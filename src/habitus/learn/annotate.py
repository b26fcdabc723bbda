"""Optional LLM annotator: names workflows and polishes step text, never their places, checks or blanks.

Off by default (`habitus learn --annotate` turns it on; the configured `habitus.llm` provider
is used, and with provider `none` nothing happens). The model sees the workflow's current name,
cues and steps and answers `{"name", "steps": [{"step", "do"}]}`; an answer is applied only
where it keeps every `{blank}` of the original text and names no file the step does not already
name, so the model cannot invent places or drop values.
"""

from __future__ import annotations

import json
import re
from typing import Any

from habitus.core.workflow import Workflow

SCHEMA: dict[str, Any] = {
    "title": "workflow_annotation",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "steps": {"type": "array", "items": {"type": "object", "properties": {
            "step": {"type": "integer"}, "do": {"type": "string"}}, "required": ["step", "do"]}},
    },
    "required": ["name", "steps"],
}
_BLANK = re.compile(r"\{[A-Za-z_][\w-]*\}")
_PATHISH = re.compile(r"[\w.-]+/[\w./-]+|[\w-]+\.(?:py|ts|tsx|js|jsx|md|go|rs|java|rb|json|ya?ml|toml|sh)\b")
MAX_NAME = 60
MAX_DO = 300


def _prompt(wf: Workflow) -> list[dict[str, Any]]:
    steps = [{"step": n, "do": s.do, "place": s.place.label() if s.place else None}
             for n, s in enumerate(wf.steps, 1)]
    return [
        {"role": "system", "content": (
            "You name and tidy procedural-memory workflows learned from coding-agent sessions. Give the workflow "
            "a short imperative name (at most 8 words) and rewrite each step's `do` as one clear imperative "
            "sentence. Keep every {blank} exactly, keep code in backticks, do not add files, places, commands or "
            "steps. Answer JSON: {\"name\": str, \"steps\": [{\"step\": int, \"do\": str}]}.")},
        {"role": "user", "content": json.dumps({"name": wf.name, "cues": wf.cues.any, "use_when": wf.use_when,
                                                "steps": steps}, ensure_ascii=False)},
    ]


def acceptable_step(original: str, proposed: str) -> bool:
    """A polished step keeps all blanks and names no path the original does not."""
    if not proposed.strip() or len(proposed) > MAX_DO:
        return False
    if set(_BLANK.findall(original)) - set(_BLANK.findall(proposed)):
        return False
    return set(_PATHISH.findall(proposed)) <= set(_PATHISH.findall(original))


def apply_annotation(wf: Workflow, answer: Any) -> dict[str, int]:
    """Apply a model answer to `wf` where it is acceptable; counts of what changed and what was refused."""
    out = {"name": 0, "steps": 0, "refused": 0}
    if not isinstance(answer, dict):
        return out
    name = answer.get("name")
    if isinstance(name, str) and 0 < len(name.strip()) <= MAX_NAME and "\n" not in name:
        wf.extra.setdefault("learned_name", wf.name)
        wf.name = name.strip()
        out["name"] = 1
    for item in answer.get("steps") or []:
        if not isinstance(item, dict) or not isinstance(item.get("step"), int) or not isinstance(item.get("do"), str):
            out["refused"] += 1
            continue
        n = item["step"]
        if not 1 <= n <= len(wf.steps):
            out["refused"] += 1
            continue
        step = wf.steps[n - 1]
        if acceptable_step(step.do, item["do"]):
            step.do = item["do"].strip()
            out["steps"] += 1
        else:
            out["refused"] += 1
    if out["name"] or out["steps"]:
        wf.extra["annotated"] = True
    return out


def annotate_workflows(workflows: list[Workflow], provider: Any = None) -> dict[str, Any]:
    """Name and polish workflows with the configured model; returns a summary (calls, changes, skipped reason)."""
    from habitus.llm.providers import LLMError, get_provider

    summary: dict[str, Any] = {"calls": 0, "named": 0, "steps": 0, "refused": 0, "skipped": None}
    try:
        provider = provider or get_provider()
    except LLMError as exc:
        summary["skipped"] = str(exc)
        return summary
    for wf in workflows:
        try:
            response = provider.chat(_prompt(wf), schema=SCHEMA, max_tokens=800, temperature=0)
            summary["calls"] += 1
            answer = response.json()
        except (LLMError, ValueError) as exc:
            summary["skipped"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            break  # no model, budget spent or a broken answer: keep the model-free text
        counts = apply_annotation(wf, answer)
        summary["named"] += counts["name"]
        summary["steps"] += counts["steps"]
        summary["refused"] += counts["refused"]
    return summary
