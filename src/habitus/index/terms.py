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
_INFLECTIONS = ("ings", "ing", "ies", "ied", "ed", "es", "s")
_DERIVATIONS = ("izations", "ization", "ational", "ations", "ation", "ators", "ator", "ities", "ity", "iveness",
                "ments", "ment", "ness", "ions", "ion", "ers", "er", "ate", "at", "ly", "e", "y")
MIN_STEM = 3


def _strip(word: str, suffixes: tuple[str, ...]) -> str:
    for suffix in suffixes:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            if suffix == "s" and word[-2] in "siu":
                return word  # "process", "status", "analysis" are not plurals
            base = word[: -len(suffix)]
            if suffix in ("ing", "ings", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "ls":
                base = base[:-1]  # "running" -> "run", "mapped" -> "map"
            return base
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light stem: one inflection (-s, -es, -ed, -ing) then one derivation (-ation, -ator, -ate, -ity, -er, -e,
    -y, …) stripped, never below MIN_STEM letters; digits and short words unchanged."""
    if len(word) <= MIN_STEM or not word.isalpha():
        return word
    return _strip(_strip(word, _INFLECTIONS), _DERIVATIONS)


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
