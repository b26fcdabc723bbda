"""Negated clauses out of a task before cue matching: "do not add a shortcut" must not fire "add a shortcut".

English: the whole words not / never / no / without, any word ending in n't (straight or curly
apostrophe), and "instead of", "rather than", "except" remove the text from the marker up to the
next clause end (`. , ; : ( )`, `!`, `?` or line end). Words that merely contain a marker
("Nothing", "cannot", "notice", "another") stay. Japanese puts the negation after what it negates
(「ショートカットを追加しないで」), so a Japanese marker (しない, しないで, ないで, 不要, 禁止) removes
its whole clause, bounded by 。 、 (and the ASCII clause ends) on both sides. Pure functions.
"""

from __future__ import annotations

import re

from habitus.recall.lazyre import lazy_re

# Clause ends. A period only ends a clause when it is not inside a word ("shortcuts.py" stays whole).
_CLAUSE_END = r"(?:[,;:()!?\n。、．，！？]|\.(?!\w))"

_EN_MARKERS = r"(?:not|never|no|without|instead\s+of|rather\s+than|except)"
_EN_NEGATED = lazy_re(
    rf"(?:(?<![\w'’]){_EN_MARKERS}(?![\w'’])|(?<![\w'’])\w{{1,30}}n['’]t(?!\w)).*?(?={_CLAUSE_END}|$)",
    re.IGNORECASE | re.DOTALL,
)

_JA_MARKERS = ("しないで", "ないで", "しない", "不要", "禁止")
_JA_BREAK = lazy_re(r"([,;:()!?\n。、．，！？])")


def _ja_clauses(text: str) -> list[str]:
    """Text split into clauses and the delimiters between them (one pass, linear in the text)."""
    return _JA_BREAK.split(text)


# Every English negation the pattern matches contains one of these (lower-cased ASCII text): a task
# without any of them has no negated clause, and the pattern is not even compiled (per-prompt processes).
_EN_KEYS = ("no", "never", "without", "instead", "rather", "except", "n't")


def _may_negate(text: str) -> bool:
    if not text.isascii():
        return True  # case folding beyond ASCII and typographic apostrophes: let the pattern decide
    low = text.lower()
    return any(k in low for k in _EN_KEYS)


def strip_negated(task: str) -> str:
    """The task with every negated clause removed (replaced by one space so words do not join)."""
    text = _EN_NEGATED.sub(" ", task) if _may_negate(task) else task
    if any(m in text for m in _JA_MARKERS):
        text = "".join(" " if any(m in part for m in _JA_MARKERS) else part for part in _ja_clauses(text))
    return text


# "do not add a keyboard shortcut", "don't touch the config", "without changing the API": a restriction of what to
# change, as opposed to a change stated negatively ("we should not display X" asks to hide X)
_RESTRICTION = lazy_re(
    r"(?:(?<![\w'’])(?:do\s+not|don['’]t|never|without)\s+(?:\w+\s+){0,2}?(?:add|adding|create|creating|change|changing"
    r"|modify|modifying|touch|touching|edit|editing|introduce|introducing|write|writing|update|updating|remove|removing)"
    rf"(?![\w'’])).*?(?={_CLAUSE_END}|$)", re.IGNORECASE | re.DOTALL)


def strip_restrictions(task: str) -> str:
    """The task without the clauses that restrict what to change ("…; do not add a config option", "don't touch
    `a.py`"): what where-to-look reads. A change stated negatively ("we should not display X") stays."""
    return _RESTRICTION.sub(" ", task) if _may_negate(task) else task


def negated_clauses(task: str) -> list[str]:
    """The clauses `strip_negated` removes, for explaining a decision (why a cue did not fire)."""
    found = [m.group(0).strip() for m in _EN_NEGATED.finditer(task)] if _may_negate(task) else []
    if any(m in task for m in _JA_MARKERS):
        found += [part.strip() for part in _ja_clauses(_EN_NEGATED.sub(" ", task))
                  if any(m in part for m in _JA_MARKERS)]
    return [c for c in found if c]
