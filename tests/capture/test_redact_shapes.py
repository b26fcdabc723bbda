"""The detector table: every secret shape of issue 12 is redacted; look-alike non-secrets are left alone."""

from __future__ import annotations

import re

import pytest
from secret_shapes import ESCAPED, LOOKALIKES, SHAPES, STRUCTURED, STRUCTURED_LOOKALIKES

from habitus.capture.redact import redact, redact_identifier, redact_value


def leaked(secret: str, out: str) -> bool:
    """The secret, or its first or last five characters (a secret cut short still leaks), is in `out`."""
    pieces = [secret] + ([secret[:5], secret[-5:]] if len(secret) >= 10 else [])
    out = re.sub(r"\[REDACTED:[a-z0-9_]+\]", "", out)  # a marker names the kind, e.g. `github_token`
    return any(piece in out for piece in pieces)


@pytest.mark.parametrize(("name", "template", "secret"), SHAPES + ESCAPED, ids=[s[0] for s in SHAPES + ESCAPED])
def test_every_secret_shape_is_redacted(name: str, template: str, secret: str) -> None:
    text = template.replace("{s}", secret)
    out, count = redact(text)
    assert count >= 1, name
    assert not leaked(secret, out), f"{name}: {out!r}"
    assert "[REDACTED:" in out


@pytest.mark.parametrize(("name", "value", "secret"), STRUCTURED, ids=[s[0] for s in STRUCTURED])
def test_secret_named_fields_and_secret_keys_are_redacted(name: str, value: dict, secret: str) -> None:
    out, count = redact_value(value)
    assert count >= 1, name
    assert not leaked(secret, repr(out)), f"{name}: {out!r}"


@pytest.mark.parametrize("text", LOOKALIKES)
def test_look_alike_non_secrets_are_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("value", STRUCTURED_LOOKALIKES)
def test_look_alike_fields_are_left_alone(value: dict) -> None:
    assert redact_value(value) == (value, 0)


def test_redaction_is_idempotent() -> None:
    for _, template, secret in SHAPES:
        once, _ = redact(template.replace("{s}", secret))
        assert redact(once) == (once, 0), once


def test_identifiers_keep_apart_after_redaction() -> None:
    first = redact_identifier("session-sk_live_51Hx" + "Zq7Xw2Rt5Yu8Io1Pa4")
    second = redact_identifier("session-sk_live_51Hx" + "Zq7Xw2Rt5Yu8Io1Pb5")
    assert "sk_live_" not in first and first != second
    assert redact_identifier("0c1f2e3d-aaaa-bbbb-cccc-123456789abc") == "0c1f2e3d-aaaa-bbbb-cccc-123456789abc"


def test_split_secret_keys_in_one_dict_do_not_collapse() -> None:
    key_a, key_b = "ghp_" + "A" * 18 + "1b2C3d4E5f6G7h8I9j0", "ghp_" + "B" * 18 + "1b2C3d4E5f6G7h8I9j0"
    out, count = redact_value({key_a: 1, key_b: 2})
    assert count == 2 and len(out) == 2 and sorted(out.values()) == [1, 2]
