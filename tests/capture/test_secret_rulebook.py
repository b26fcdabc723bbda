"""The vendored rule book: gitleaks' rule set as upstream ships it, translated faithfully to Python's `re`."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources

import pytest

from habitus.capture.redact import redact
from habitus.capture.secret_rulebook import rulebook
from habitus.capture.secret_translate import RegexTranslationError, build_rulebook, translate_go_regex

DATA = resources.files("habitus").joinpath("data/secrets")


def test_rules_json_is_exactly_the_translation_of_the_vendored_toml_files() -> None:
    book = rulebook()
    sources = {s["name"]: s for s in book["sources"]}
    rebuilt = build_rulebook([
        ({k: v for k, v in sources["gitleaks"].items() if k not in ("sha256", "rules")},
         DATA.joinpath("gitleaks.toml").read_text(encoding="utf-8")),
        ({k: v for k, v in sources["habitus"].items() if k not in ("sha256", "rules")},
         DATA.joinpath("habitus.toml").read_text(encoding="utf-8")),
    ])
    assert json.loads(json.dumps(rebuilt)) == book, "run scripts/update_secret_rules.py --rebuild"


def test_the_vendored_gitleaks_file_is_recorded_with_version_source_licence_and_digest() -> None:
    gitleaks = next(s for s in rulebook()["sources"] if s["name"] == "gitleaks")
    text = DATA.joinpath("gitleaks.toml").read_text(encoding="utf-8")
    assert gitleaks["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert re.fullmatch(r"\d+\.\d+\.\d+", gitleaks["version"]) and "github.com/gitleaks/gitleaks" in gitleaks["url"]
    assert gitleaks["licence"].startswith("MIT") and "Zachary Rice" in DATA.joinpath("gitleaks.LICENSE").read_text()
    assert gitleaks["rules"] >= 200 and text.startswith("# This file has been auto-generated")


@pytest.mark.parametrize(("go", "python"), [
    (r"\b(p8e-(?i)[a-z0-9]{32})", r"\b(p8e-(?i:[a-z0-9]{32}))"),  # a flag set in the middle scopes the rest
    (r"a(?i)b|c", r"a(?i:b)|(?i:c)"),  # ... and the later alternatives of its group
    (r"(?i)abc|d(?-i)e", r"(?i)abc|d(?-i:e)"),  # a leading flag set stays global
    (r"\b(pat[[:alnum:]]{14})\b", r"\b(pat[a-zA-Z0-9]{14})\b"),  # POSIX classes are spelled out
    (r"(?:\s|\z)x$", r"(?:\s|\Z)x\Z"),  # \z and $ are the end of the text
    (r"(?m)^a$", r"(?m)^a$"),  # ... but a line end under (?m)
    (r"(?<name>x)", r"(?P<name>x)"),
])
def test_go_regexes_translate_to_python_with_the_same_meaning(go: str, python: str) -> None:
    assert translate_go_regex(go) == python


def test_a_regex_python_cannot_express_is_a_clear_error() -> None:
    with pytest.raises(RegexTranslationError, match="ungreedy"):
        translate_go_regex(r"a(?U)b*")
    with pytest.raises(RegexTranslationError):
        translate_go_regex(r"[[:nonsense:]]")


def test_every_rule_compiles_and_most_are_matched_where_their_keyword_starts() -> None:
    rules = rulebook()["rules"]
    for rule in rules:
        re.compile(rule["regex"], re.ASCII)
        assert rule["keywords"], rule["id"]
    anchored = [r for r in rules if r["anchored"]]
    assert len(anchored) >= 0.9 * len(rules)
    for rule in anchored:
        assert all(len(a) >= 2 for a in rule["anchors"]), rule["id"]


def test_gitleaks_semantics_entropy_allowlist_and_stopwords_are_kept() -> None:
    example = "AKIA" + "IOSFODNN7EXAMPLE"  # gitleaks' allowlist: an access key id ending in EXAMPLE is none
    assert redact(f"id {example} here") == (f"id {example} here", 0)
    low = "adafruit_key = " + "a" * 32  # too little entropy for the rule, one letter for the global allowlist
    assert redact(low)[1] == 0
    real = "adafruit_key = " + "f3Kd9Lq2Wm8Xz7Rt4Yp1Nc6Vb5Hs0Ja2"
    assert "f3Kd9Lq2Wm8Xz7Rt4Yp1Nc6Vb5Hs0Ja2" not in redact(real)[0]
