"""Secret redaction: every kind named in the issue is replaced; ordinary code and prose are left alone."""

from __future__ import annotations

import pytest

from habitus.capture.redact import redact, redact_value

# Built by concatenation so that this file itself does not trip secret scanners.
SECRETS = {
    "openai": "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "anthropic": "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA_-zz",
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github_pat": "github_pat_" + "11ABCDEFG0123456789_Zq7Xw2Rt5Yu8Io1Pa4Sd6Fg9Hj3Kl",
    "aws": "AKIA" + "IOSFODNN7EXAMPLQ",
    "slack": "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOp",
    "google": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\nZm9vYmFy\n-----END RSA PRIVATE KEY-----",
}
ASSIGNMENTS = {
    "password=": ("DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    "token:": ("token: 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    "json key": ('{"api_key": "q1w2e3r4t5y6u7i8"}', "q1w2e3r4t5y6u7i8"),
    "secret_key =": ("AWS_SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG"),
    "url credentials": ("git clone https://bob:s3cr3tpass@github.com/x/y.git", "s3cr3tpass"),
    "bearer header": ("Authorization: Bearer abcdef0123456789abcdef0123", "abcdef0123456789abcdef0123"),
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_provider_keys_and_private_material_are_redacted(kind: str) -> None:
    secret = SECRETS[kind]
    text, count = redact(f"before {secret} after")
    assert secret not in text and count == 1
    assert text.startswith("before ") and text.endswith(" after")
    assert "[REDACTED:" in text


@pytest.mark.parametrize("name", sorted(ASSIGNMENTS))
def test_assignments_and_url_credentials_keep_the_name_and_lose_the_value(name: str) -> None:
    text, secret = ASSIGNMENTS[name]
    out, count = redact(text)
    assert secret not in out and count >= 1


@pytest.mark.parametrize("text", [
    "apiKey: customModel.api_key || \"\"",
    "token = get_token()",
    "password: str",
    "password = os.environ['DB_PASSWORD']",
    "max_tokens: 4096 and input_tokens: 12",
    "the key insight is caching",
    "https://github.com/owner/repo.git",
    "def sk_learn_helper(): pass",
])
def test_ordinary_code_and_prose_are_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def test_truncated_pem_block_is_still_redacted() -> None:
    out, count = redact("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA")
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in out and count == 1


def test_nested_values_are_redacted_and_counted() -> None:
    value = {"cmd": ["curl", "-H", f"x-api-key: {SECRETS['anthropic']}"], "n": 3}
    out, count = redact_value(value)
    assert count == 1 and SECRETS["anthropic"] not in str(out) and out["n"] == 3
