"""The generated canary corpus (issue 21): every shape is redacted and every look-alike is left alone.

`secret_corpus` draws ~900 shapes from the vendored rule sets and from tables of names, syntaxes,
tools, files, URLs, prefixes and split or base64-wrapped forms. On the code before issue 21, 459 of
924 of them leaked (their value or its first or last ten characters survived `redact`).
"""

from __future__ import annotations

from collections import Counter

from secret_corpus import all_shapes, lookalike_shapes, pieces, rule_shapes

from habitus.capture.redact import redact
from habitus.capture.secret_rulebook import rules


def _leaks(shapes: list[tuple[str, str, str]]) -> list[str]:
    leaks = []
    for name, text, secret in shapes:
        out, count = redact(text)
        if count == 0 or any(piece in out for piece in pieces(secret)):
            leaks.append(f"{name}: {text[:100]!r} -> {out[:100]!r}")
    return leaks


def test_the_corpus_is_hundreds_of_distinct_shapes_from_every_family() -> None:
    shapes = all_shapes()
    families = Counter(name.split(":")[0] for name, _, _ in shapes)
    assert len(shapes) >= 900 and len({secret for _, _, secret in shapes}) >= 880
    assert set(families) == {"rule", "name", "tool", "file", "url", "prefix", "split", "base64"}
    assert min(families.values()) >= 4


def test_nearly_every_rule_of_the_vendored_rule_sets_has_a_sample() -> None:
    sampled = {name.split(":", 1)[1] for name, _, _ in rule_shapes()}
    assert len(sampled) >= 0.95 * len(rules()), sorted({r["id"] for r in rules()} - sampled)


def test_no_generated_secret_survives_redaction() -> None:
    leaks = _leaks(all_shapes())
    assert not leaks, f"{len(leaks)} leaks:\n" + "\n".join(leaks[:40])


def test_look_alikes_in_the_same_places_are_left_alone() -> None:
    changed = [(text, redact(text)[0]) for text in lookalike_shapes() if redact(text)[1]]
    assert len(lookalike_shapes()) >= 1000
    assert not changed, "\n".join(f"{a!r} -> {b!r}" for a, b in changed[:40])


def test_redacting_the_corpus_twice_changes_nothing_more() -> None:
    for _, text, _ in all_shapes()[::7]:
        once, _ = redact(text)
        assert redact(once) == (once, 0), once
