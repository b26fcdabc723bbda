"""Cue pick: which workflows a task's words ask for, which of their steps it needs, and item-by-item lists.

A workflow is picked when one of its `any` phrases occurs in the task (case- and whitespace-folded,
with negated clauses removed) and none of its `none` phrases does. A step that has step cues is
skipped unless its own cue occurs; a workflow whose steps are all skipped is not picked. A task
that is a numbered or bulleted list of at least two items is matched item by item, each item read
together with the task's shared text; a step is kept when any item needs it, and fills are taken
per item. Matching is plain substring search plus word-boundary checks, so a thousand workflows
match in milliseconds without compiling a regex per phrase; a hyphenated compound counts as one
word ("add a keyboard" does not fire on "keyboard-accessible"). When several workflows fire and
some only inside subordinate clauses ("… that returns the current config options"),
`prefer_main_clause` keeps the ones asked for in a main clause. Pure functions.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from habitus.core.workflow import Cues, Workflow
from habitus.recall.fills import fill_blanks, unnamed
from habitus.recall.lazyre import lazy_re
from habitus.recall.negation import strip_negated

_SPACE = lazy_re(r"[\s_\-‐–—]+")
_COMPOUND_HYPHEN = lazy_re(r"(?<=\w)[-‐](?=\w)")  # "keyboard-accessible": one word, not two
_DASHES = lazy_re(r"[-‐]")
_ITEM_LINE = lazy_re(r"^\s*(?:\(?\d{1,2}[.)]|[-*•+]|[a-z][.)])\s+(\S.*)$", re.IGNORECASE)
# Subordinate clauses: a relative or adverbial clause ("that returns the current config options",
# "which lists …", "when set it turns keyboard shortcuts off") or a reduced relative ("described in
# the docs"). One runs from its marker to the clause end: . ; : ! ? ( ) or a line end, or a comma
# followed by a coordinator (", and add …" starts a new main clause). A bare comma does not end it.
_SUBORDINATOR = lazy_re(
    r"(?<![\w-])(?:that|which|who|whom|whose|where|when|whenever|while|if|unless|once|because|since"
    r"|(?:described|listed|shown|defined|documented|mentioned|explained|specified|referenced)\s+(?:in|by|on|under))"
    r"(?![\w-])")
_SUBORDINATE_END = lazy_re(r"[;:!?()\n。、]|\.(?!\w)|,\s*(?:and|or|then|but|also|plus)(?![\w-])")
_PLURAL = lazy_re(r"e?s(?![a-z0-9])")
_INLINE_ITEM = lazy_re(r"(?:^|(?<=\s))\(?(\d{1,2})[.)]\s+")


@functools.lru_cache(maxsize=65536)
def fold_phrase(phrase: str) -> str:
    """Cue phrases folded (hyphens are spaces), cached: the same phrases are folded on every recall."""
    return _fold_cue(phrase)


def fold(text: str) -> str:
    """Case- and whitespace-folded text for matching.

    Underscores, dashes and free-standing hyphens count as spaces; a hyphen inside a compound
    ("keyboard-accessible") is kept as `-` so `phrase_occurs` can tell a compound's part from a word.
    """
    text = _COMPOUND_HYPHEN.sub("\0", text.casefold())
    return _SPACE.sub(" ", text).replace("\0", "-").strip()


def _fold_cue(phrase: str) -> str:
    """A cue phrase folded: every hyphen is a space ("keyboard-shortcut" is the phrase "keyboard shortcut")."""
    if (phrase.isascii() and phrase == phrase.lower() and phrase.replace(" ", "").isalnum()
            and "  " not in phrase and phrase[:1] != " " and phrase[-1:] != " "):
        return phrase  # already folded (most cues): lower-case ASCII words and single spaces
    return _SPACE.sub(" ", phrase.casefold()).strip()


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() and ch.isascii()


@functools.lru_cache(maxsize=64)
def _spaced(text: str) -> str:
    """Folded text with compound hyphens as spaces (same length, so positions carry over)."""
    return text.replace("-", " ")


def _joined(text: str, i: int, step: int) -> bool:
    """Is text[i] a compound hyphen (a hyphen with a word character on its far side)?"""
    j = i + step
    return 0 <= i < len(text) and text[i] == "-" and 0 <= j < len(text) and _is_word_char(text[j])


def phrase_spans(phrase: str, text: str) -> list[tuple[int, int]]:
    """(start, end) of each whole-word occurrence of folded `phrase` in folded `text`.

    Whole words: no letter or digit right before or after (a plural `s` / `es` may follow), and the
    match neither starts nor ends inside a hyphenated compound: "keyboard shortcut" matches
    "keyboard-shortcut handler" (the compound is covered whole) but "add a keyboard" does not match
    "add a keyboard-accessible ring", nor "mail" "e-mail". Non-ASCII phrases (Japanese, …) match as
    plain substrings: such scripts have no spaces.
    """
    phrase = phrase.replace("-", " ")
    if not phrase:
        return []
    plain = _spaced(text) if "-" in text else text
    out = []
    start = plain.find(phrase)
    while start != -1:
        end = start + len(phrase)
        word_start, word_end = _is_word_char(phrase[0]), _is_word_char(phrase[-1])
        before_ok = (start == 0 or not _is_word_char(text[start - 1]) or not word_start) and not (
            word_start and _joined(text, start - 1, -1))
        stop = end
        if word_end and end < len(text) and _is_word_char(text[end]):
            m = _PLURAL.match(text, end)
            stop = m.end() if m else -1
        after_ok = stop != -1 and not (word_end and _joined(text, stop, 1))
        if before_ok and after_ok:
            out.append((start, max(stop, end)))
        start = plain.find(phrase, start + 1)
    return out


def phrase_occurs(phrase: str, text: str) -> bool:
    """Does folded `phrase` occur in folded `text` as whole words (see `phrase_spans`)?"""
    return bool(phrase_spans(phrase, text))


def first_occurring(phrases: list[str], text: str) -> str | None:
    """The first phrase (as written in the workflow) that occurs in folded `text`."""
    for phrase in phrases:
        folded = fold_phrase(phrase)
        if folded and phrase_occurs(folded, text):
            return phrase
    return None


def split_items(task: str) -> list[str]:
    """The items of a multi-change task (a numbered or bulleted list of ≥ 2 items), else [].

    Items are list lines (`1.`, `2)`, `-`, `*`, `•`) with their indented continuation lines, or an
    inline numbered run ("1) … 2) …") numbered from 1 in order.
    """
    items: list[str] = []
    current: list[str] | None = None
    for line in task.splitlines():
        m = _ITEM_LINE.match(line)
        if m:
            if current is not None:
                items.append(" ".join(current))
            current = [m.group(1).strip()]
        elif current is not None and line.strip() and line[:1].isspace():
            current.append(line.strip())
        elif current is not None:
            items.append(" ".join(current))
            current = None
    if current is not None:
        items.append(" ".join(current))
    if len(items) >= 2:
        return items
    return _inline_items(task)


def _inline_items(task: str) -> list[str]:
    marks = list(_INLINE_ITEM.finditer(task))
    expected, chosen = 1, []
    for m in marks:
        if int(m.group(1)) == expected:
            chosen.append(m)
            expected += 1
    if len(chosen) < 2:
        return []
    out = []
    for i, m in enumerate(chosen):
        end = chosen[i + 1].start() if i + 1 < len(chosen) else len(task)
        item = task[m.end():end].strip().rstrip(";,")
        if item:
            out.append(item)
    return out if len(out) >= 2 else []


def shared_text(task: str, items: list[str]) -> str:
    """The task without its list items: the context every item is read with."""
    if not items:
        return task
    lines = [ln for ln in task.splitlines() if not _ITEM_LINE.match(ln) and not (ln[:1].isspace() and ln.strip())]
    if len(lines) == len(task.splitlines()):  # an inline list: keep the text before the first item
        m = _INLINE_ITEM.search(task)
        return task[:m.start()].strip() if m else ""
    return "\n".join(ln for ln in lines if ln.strip())


@dataclass
class Unit:
    """One reading of the task: the whole task, or one item of a list with the shared text."""

    text: str  # as written (item + shared text)
    item: str | None  # the item alone, None for a single-change task
    folded: str  # negation-stripped, folded: what cues are matched against
    shared: str = ""


def task_units(task: str) -> list[Unit]:
    items = split_items(task)
    if not items:
        return [Unit(text=task, item=None, folded=fold(strip_negated(unnamed(task))))]
    shared = shared_text(task, items)
    units = []
    for item in items:
        text = f"{shared}\n{item}" if shared else item
        units.append(Unit(text=text, item=item, folded=fold(strip_negated(unnamed(text))), shared=shared))
    return units


@dataclass
class CuePick:
    """A workflow the task's cues asked for."""

    workflow: Workflow
    why: str  # the phrase that fired
    kept_steps: list[int]  # 1-based step numbers the task needs
    skipped_steps: list[int]
    fills: dict[str, str]  # values for the first item that fired (the only one for a single task)
    items: list[dict[str, Any]] = field(default_factory=list)  # multi-change: [{item, why, fills, steps}]
    score: float | None = None  # set by ranked (fallback) selection


def _step_cue_map(wf: Workflow) -> dict[int, tuple[list[str], list[str]]]:
    return {sc.step: (sc.any, sc.none) for sc in wf.cues.steps}


def _steps_for(wf: Workflow, folded: str, step_cues: dict[int, tuple[list[str], list[str]]]) -> list[int]:
    kept = []
    for number in range(1, len(wf.steps) + 1):
        cue = step_cues.get(number)
        if cue is None:
            kept.append(number)
            continue
        any_, none = cue
        if (not any_ or first_occurring(any_, folded)) and not first_occurring(none, folded):
            kept.append(number)
    return kept


def cues_may_fire(cues: Cues, units: list[Unit]) -> bool:
    """Cheap pre-check on a workflow's cues alone: an `any` phrase fires in some unit without a `none` phrase."""
    return phrases_may_fire(cues.any, cues.none, units)


def phrases_may_fire(any_: list[str], none: list[str], units: list[Unit]) -> bool:
    """`cues_may_fire` on the phrase lists themselves (the recall index keeps no `Cues` objects)."""
    return any(first_occurring(any_, u.folded) and not first_occurring(none, u.folded) for u in units)


def cues_vetoed(cues: Cues, units: list[Unit]) -> bool:
    """A `none` phrase occurs in some reading of the task."""
    return phrases_vetoed(cues.none, units)


def phrases_vetoed(none: list[str], units: list[Unit]) -> bool:
    """`cues_vetoed` on the `none` phrases themselves."""
    return bool(none) and any(first_occurring(none, u.folded) for u in units)


def pick_by_cues(wf: Workflow, units: list[Unit]) -> CuePick | None:
    """The pick of `wf` for a task read as `units`, or None when no unit asks for it."""
    if not wf.cues.any:
        return None
    step_cues = _step_cue_map(wf)
    kept: set[int] = set()
    fired: list[dict[str, Any]] = []
    for unit in units:
        phrase = first_occurring(wf.cues.any, unit.folded)
        if phrase is None or first_occurring(wf.cues.none, unit.folded):
            continue
        steps = _steps_for(wf, unit.folded, step_cues) if wf.steps else []
        if wf.steps and not steps:
            continue
        kept.update(steps)
        source = strip_negated(unit.item if unit.item is not None else unit.text)
        fills = fill_blanks(wf.fills, source, fallback_text=strip_negated(unit.shared) if unit.shared else None)
        fired.append({"item": unit.item, "why": phrase, "fills": fills, "steps": steps})
    if not fired:
        return None
    all_steps = list(range(1, len(wf.steps) + 1))
    return CuePick(
        workflow=wf,
        why=fired[0]["why"],
        kept_steps=[n for n in all_steps if n in kept],
        skipped_steps=[n for n in all_steps if n not in kept],
        fills=fired[0]["fills"],
        items=fired if units[0].item is not None else [],
    )


def subordinate_spans(folded: str) -> list[tuple[int, int]]:
    """(start, end) of each subordinate clause of folded text (see `_SUBORDINATOR`)."""
    spans = []
    pos = 0
    while (m := _SUBORDINATOR.search(folded, pos)) is not None:
        end_m = _SUBORDINATE_END.search(folded, m.end())
        end = end_m.start() if end_m else len(folded)
        spans.append((m.start(), end))
        pos = max(end, m.end())
    return spans


def in_main_clause(phrases: list[str], units: list[Unit]) -> bool:
    """Does some phrase occur in some reading of the task outside every subordinate clause?"""
    for unit in units:
        subs = subordinate_spans(unit.folded)
        for phrase in phrases:
            for start, _ in phrase_spans(fold_phrase(phrase), unit.folded):
                if not any(a <= start < b for a, b in subs):
                    return True
    return False


def prefer_main_clause(workflows: list[Workflow], units: list[Unit]) -> list[Workflow]:
    """Of workflows whose cues fired, those asked for in a main clause, when some are and some are not.

    "Add an API endpoint … that returns the current config options" asks for the endpoint; the config
    options are only what it returns. A workflow whose cues occur only inside subordinate clauses is
    dropped when another one's cues occur in a main clause; when all or none do, all are kept (a task
    that coordinates two requests, "add a shortcut …, and add an endpoint …", keeps both).
    """
    if len(workflows) < 2:
        return workflows
    main = [wf for wf in workflows if in_main_clause(wf.cues.any, units)]
    return main if main else workflows
