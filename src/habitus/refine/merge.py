"""Stage 6, merge accepted edits into the skill with scope conditions instead of deletions.

The YAML frontmatter is kept byte for byte (the body is edited, the header never re-serialised).
A guardrail that conflicts with an instruction the skill endorses scopes that instruction where it
is written ("<instruction> — except <condition>: <guardrail>"); a proposal with `op="remove"` and a
`target` line deletes that line (direct contradiction only). Everything else lands as a bullet in a
section of its own at the end, so unrelated guidance is untouched. Pure text in, text out.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from habitus.core.untrusted import one_line
from habitus.refine.behaviours import Behaviour
from habitus.refine.propose import REINFORCE, Proposal

GUARDRAIL_HEADING = "## Guardrails learned from failed runs"
REINFORCE_HEADING = "## What worked in successful runs"
_NEGATION = re.compile(r"\b(?:not|never|avoid|don't|do not|except|unless)\b", re.I)
_ITEM_START = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_FRONTMATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.M)


def split_frontmatter(text: str) -> tuple[str, str]:
    """(frontmatter including its delimiter lines and the newline after them, body); '' when absent."""
    if not text.startswith("---"):
        return "", text
    first_newline = text.find("\n")
    if first_newline == -1 or text[:first_newline].strip() != "---":
        return "", text
    end = _FRONTMATTER_END.search(text, first_newline + 1)
    if end is None:
        return "", text
    cut = text.find("\n", end.end())
    cut = len(text) if cut == -1 else cut + 1
    return text[:cut], text[cut:]


def _items(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line index of each instruction: a list item with its continuation lines, or a paragraph."""
    spans: list[tuple[int, int]] = []
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            i += 1
            continue
        if in_fence or not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        start = i
        i += 1
        while i < len(lines) and lines[i].strip() and not _ITEM_START.match(lines[i]) \
                and not lines[i].lstrip().startswith(("#", "```")):
            i += 1
        spans.append((start, i - 1))
    return spans


def find_endorsement(body: str, behaviour: Behaviour) -> tuple[int, int] | None:
    """The first instruction (line span) that recommends `behaviour` without already limiting it."""
    if not behaviour.endorse:
        return None
    pattern = re.compile(behaviour.endorse, re.I)
    lines = body.split("\n")
    for start, end in _items(lines):
        text = " ".join(lines[start: end + 1])
        if pattern.search(text) and not _NEGATION.search(text):
            return start, end
    return None


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _append_bullet(body: str, heading: str, bullet: str) -> str:
    lines = body.rstrip("\n").split("\n")
    if heading in lines:
        at = lines.index(heading) + 1
        while at < len(lines) and not lines[at].startswith("#"):
            at += 1
        while at > 0 and not lines[at - 1].strip():
            at -= 1
        lines.insert(at, bullet)
    else:
        lines += ["", heading, "", bullet]
    return "\n".join(lines) + "\n"


def merge(skill_text: str, proposals: list[Proposal], registry: dict[str, Behaviour]) -> tuple[str, list[dict]]:
    """The merged skill and one log entry per proposal (action: scoped | added | removed | present | same-as)."""
    frontmatter, body = split_frontmatter(skill_text)
    log: list[dict[str, Any]] = []
    done: dict[tuple[str, str], str] = {}
    for proposal in proposals:
        entry: dict[str, Any] = {"proposal": proposal.id}
        same = done.get((proposal.kind, proposal.behaviour))
        if same is not None:  # two clusters found the same behaviour: one edit in the skill
            log.append({**entry, "action": "same-as", "same_as": same})
            continue
        done[(proposal.kind, proposal.behaviour)] = proposal.id
        # a proposal is worded from traces (or by a model reading them): one sanitised line in the skill
        text, condition = one_line(proposal.text), one_line(proposal.condition or "")
        if proposal.op == "remove" and proposal.target:
            lines = body.split("\n")
            hits = [i for i, line in enumerate(lines) if line.strip() == proposal.target.strip()]
            if hits:
                entry.update(action="removed", line=lines[hits[0]])
                del lines[hits[0]]
                body = "\n".join(lines)
                log.append(entry)
                continue
        if text in body:
            log.append({**entry, "action": "present"})
            continue
        span = None if proposal.kind == REINFORCE else find_endorsement(body, registry[proposal.behaviour])
        if span is not None:
            lines = body.split("\n")
            start, end = span
            before = "\n".join(lines[start: end + 1])
            last = lines[end].rstrip()
            stop = "." if last.endswith(".") else ""
            clause = f" — except {condition or 'where it failed before'}: {_lower_first(text)}"
            lines[end] = (last[:-1] if stop else last) + clause.rstrip(".") + "."
            body = "\n".join(lines)
            entry.update(action="scoped", before=before, after="\n".join(lines[start: end + 1]))
        else:
            heading = REINFORCE_HEADING if proposal.kind == REINFORCE else GUARDRAIL_HEADING
            body = _append_bullet(body, heading, f"- {text}")
            entry.update(action="added", section=heading)
        log.append(entry)
    return frontmatter + body, log


def unified_diff(old: str, new: str, name: str = "SKILL.md") -> str:
    return "".join(difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=f"a/{name}", tofile=f"b/{name}"
    ))
