"""Task intent: does the task ask for a `change` to the code, or only to `inspect` it?

Lexical overlap is not intent: "Review the keyboard shortcuts described in the docs only, no code
changes" shares words with the shortcut workflow but asks for no edit, so a `change` workflow must
not be handed to it. The rules, in order (first that applies wins):

0. a pasted plan to implement ("Implement the following plan: # …") → change: a "no schema changes" or
   "read-only view" inside the plan describes the work, it does not restrict it;
1. an explicit no-change restriction anywhere ("no code changes", "docs only", "don't modify the
   code", "read-only", "just look", "コードは変更しない", …) → inspect;
2. a later sentence starts with a change verb ("Why does export fail? Fix it.") → change; the
   leading verb of the request (after politeness like "please", "can you") is an inspect verb
   (review, explain, audit, check, …) and no change verb follows a conjunction ("… and fix it") →
   inspect; a change verb → change;
3. a question ("how does …?", "why is …") without a change verb → inspect;
4. otherwise any change verb → change; any inspect verb → inspect; else change (most agent tasks
   are change requests, and a cue still has to fire before anything is handed over).
"""

from __future__ import annotations

import re

from habitus.recall.lazyre import lazy_re
from habitus.recall.negation import strip_negated

INTENTS = ("change", "inspect")

_NO_CHANGE = lazy_re(
    r"(?<!\w)(?:"
    r"no\s+(?:code\s+|file\s+|source\s+)?(?:changes?|edits?|modifications?)"
    r"|(?:do\s+not|don['’]t|never|without)\s+(?:\w+\s+){0,2}?(?:modify|modifying|change|changing|edit|editing|touch"
    r"|touching|write|writing|alter|altering)\s+(?:any\s+|the\s+)?(?:code|files?|source|anything)"
    r"|(?:docs?|documentation|readme)\s+only|only\s+(?:the\s+)?(?:docs?|documentation)"
    r"|read[-\s]only|just\s+(?:look|read|review|explain|tell|check)|only\s+(?:look|read|review|explain|report)"
    r"|no\s+need\s+to\s+(?:change|modify|edit)|leave\s+the\s+code\s+(?:as\s+is|alone|unchanged)"
    r")(?!\w)"
    r"|コード(?:は|を)?(?:変更|修正|編集)(?:しない|しないで|不要|禁止)|(?:変更|修正|編集)(?:は|を)?(?:しない|しないで|不要|禁止)"
    r"|読むだけ|見るだけ|確認だけ|確認のみ|レビューのみ",
    re.IGNORECASE,
)

def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CHANGE_VERBS = _wordset("""
add adds adding implement implementing create creating fix fixes fixing update updating remove removing
delete deleting rename renaming refactor refactoring change changing modify modifying make write writing
move moving support introduce replace replacing bump upgrade migrate migrating convert port extract
split merge wire hook register enable disable toggle allow expose install configure set patch build
insert append extend improve optimize optimise speed reduce increase drop deprecate handle resolve
hide display highlight sort align center style color colour validate cache format clarify mention mark group
redesign surface propagate block filter expand collapse clean tidy polish simplify restore revert rewrite tweak
adjust prevent avoid ensure rework reorder swap persist store render translate localize localise document
""")

_INSPECT_VERBS = _wordset("""
review reviewing explain explaining audit auditing check inspect describe summarize summarise
investigate examine analyze analyse look read list find tell compare evaluate assess understand
trace locate identify report verify walk
""")

_JA_CHANGE = ("追加", "修正", "実装", "変更", "削除", "作成", "更新", "直して", "直す", "対応")
_JA_INSPECT = ("レビュー", "確認", "説明", "調査", "調べて", "教えて", "読んで", "監査")

_QUESTION_START = _wordset("what why how where which who when is are does do did can could should")
_POLITE = lazy_re(
    r"^\s*(?:(?:please|pls|kindly|hey|ok|okay|so|now|then|also|first|next)\b[\s,]*"
    r"|(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"|(?:i\s+(?:want|need|would\s+like|'d\s+like)\s+(?:you\s+)?to)\s+"
    r"|(?:we\s+(?:need|want|have)\s+to)\s+|let['’]?s\s+|go\s+ahead\s+and\s+|help\s+me\s+)",
    re.IGNORECASE,
)
_WORD = lazy_re(r"[a-z][a-z'’]*", re.IGNORECASE)
_PLAN_REQUEST = lazy_re(r"^\s*(?:please\s+)?implement\s+(?:the\s+following|this)\s+plan\b", re.IGNORECASE)
_SENTENCE_BREAK = lazy_re(r"(?<=[.!?;:])\s+|\n+|[。！？]")
_CONJ_CHANGE = lazy_re(r"\b(?:and|then|also|&)\s+(?:then\s+)?(\w+)", re.IGNORECASE)


def _leading_words(text: str) -> list[str]:
    rest = text.strip().lstrip("-*•#>0123456789.) ")
    for _ in range(4):
        stripped = _POLITE.sub("", rest, count=1)
        if stripped == rest:
            break
        rest = stripped
    return [w.lower() for w in _WORD.findall(rest[:200])]


# Every English phrase `_NO_CHANGE` matches contains one of these (lower-cased ASCII text); a task
# without any of them cannot match, so the pattern is compiled only when it may (per-prompt processes).
_NO_CHANGE_KEYS = ("no", "don", "never", "without", "doc", "readme", "only", "read", "just", "leave")


def _may_say_no_change(task: str) -> bool:
    if not task.isascii():
        return True  # Japanese phrases, typographic apostrophes, case folding beyond ASCII: the pattern decides
    low = task.lower()
    return any(k in low for k in _NO_CHANGE_KEYS)


_EXPLAIN_VERBS = _wordset("explain explaining describe summarize summarise tell list show walk find locate read "
                          "compare understand document")


def verifies(task: str) -> bool:
    """Whether an `inspect` task may run the repo's checks: a review, an investigation, a pasted error or issue
    link ("Review the changes…", "can you take a look at <url>", "investigate why CI fails") — not a question, a
    request to explain or list, nor one that says to change nothing ("just explain", "read-only")."""
    words = _leading_words(task)
    if not words or words[0] in _QUESTION_START or words[0] in _EXPLAIN_VERBS:
        return False
    return not (_may_say_no_change(task) and _NO_CHANGE.search(task))


def classify_intent(task: str) -> str:
    """`change` or `inspect` (see the module docstring for the rules)."""
    if _PLAN_REQUEST.match(task):
        return "change"
    if _may_say_no_change(task) and _NO_CHANGE.search(task):
        return "inspect"
    text = strip_negated(task)
    sentences = [_leading_words(part) for part in _SENTENCE_BREAK.split(text)]
    sentences = [w for w in sentences if w]
    if any(w[0] in _CHANGE_VERBS for w in sentences[1:]):
        return "change"  # "Why does the export fail? Fix it." asks for a change in its second sentence
    words = sentences[0] if sentences else []
    all_words = {w.lower() for w in _WORD.findall(text)}
    has_change = bool(all_words & _CHANGE_VERBS) or any(k in text for k in _JA_CHANGE)
    if words:
        first = words[0]
        if first == "show" and len(words) > 1 and words[1] in {"me", "us"}:
            return "inspect"
        if first in _INSPECT_VERBS:
            follow = {m.group(1).lower() for m in _CONJ_CHANGE.finditer(text)}
            return "change" if follow & _CHANGE_VERBS else "inspect"
        if first in _CHANGE_VERBS:
            return "change"
        if first in _QUESTION_START and (text.rstrip().endswith("?") or first in {"what", "why", "how", "where",
                                                                                   "which", "who"}):
            if first in {"can", "could", "should"} and has_change:
                return "change"
            return "change" if has_change and first not in {"what", "why", "how", "where", "which", "who",
                                                            "is", "are", "does", "did"} else "inspect"
    if any(k in text for k in _JA_INSPECT) and not any(k in text for k in _JA_CHANGE):
        return "inspect"
    if has_change:
        return "change"
    if all_words & _INSPECT_VERBS:
        return "inspect"
    return "change"
