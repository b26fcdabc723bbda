"""Retrieval terms: code-aware tokens without stop words, folded to a light stem.

`terms("Remediation history shows the remediated files")` -> remedi, histori, show, remedi, file.
The stem is a few suffix rules (plural, -ing, -ed, -ation, -ator, -ity, …), enough for a task's
prose ("remediation", "remediate") to meet the words of code and of other tasks ("Remediate",
"remediations") without a language model. Used by the repo map on both sides: what it learns
from past tasks and files, and the words of a new task.
"""

from __future__ import annotations

import re
from functools import lru_cache

from habitus.core.lazyre import lazy_re
from habitus.index.tokenize import tokenize

_STOP_TEXT = """
a an the and or but if then else of to in on at by for with from as is are was were be been being am this that these
those it its we you i he she they them our your their us me my mine do does did done doing have has had having not no
nor yes can could should would will shall may might must so such than too very just also only into onto over under up
down out about after before when where which who whom what why how all any each both few more most other some own same
there here again further once while during until against between through above below off per via etc eg ie e g vs
let lets make makes made use uses used using need needs needed want wants like get gets got set sets new now still
already currently current instead rather way ways thing things something anything everything nothing one two three
sure please thanks ok okay well see look looks also even much many every each either neither
implement implementation implemented plan plans following context change changes changed changing update updates
updated updating add adds added adding fix fixes fixed fixing remove removes removed removing
file files line lines code step steps task tasks approach verification verify run running should"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
_SUFFIXES = ("izations", "ization", "ational", "ations", "ation", "ators", "ator", "ities", "ity", "iveness",
             "ments", "ment", "ness", "ings", "ing", "ions", "ion", "ies", "ied", "ers", "er", "ed", "es", "ly",
             "ate", "s", "e", "y")
MIN_STEM = 3


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix-stripping stem (never shorter than MIN_STEM letters); digits and short words unchanged."""
    if len(word) <= MIN_STEM + 1 or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            base = word[: -len(suffix)]
            if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "aeiouls":
                base = base[:-1]  # "running" -> "run", "mapped" -> "map"
            return base
    return word


_URL = lazy_re(r"https?://\S+|\b[0-9a-f]{7,64}\b|\b\d[\d:.,-]*\b")


def terms(text: str) -> list[str]:
    """Stemmed retrieval terms of `text` in order (repeats kept), without stop words, URLs, hashes and numbers."""
    out = []
    for token in tokenize(_URL.sub(" ", text or "")):
        if len(token) < 2 or token in STOP_WORDS or token.isdigit():
            continue
        word = stem(token)
        if word not in STOP_WORDS:
            out.append(word)
    return out


def path_terms(path: str) -> list[str]:
    """Terms of a file path: its folder and file name segments (split on case, `_`, `-`, `.`), extension left out."""
    name = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return terms(re.sub(r"[/_.-]+", " ", name))


__all__ = ["STOP_WORDS", "path_terms", "stem", "terms"]
