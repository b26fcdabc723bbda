"""No false positives on the real histories in shared/ (issue 21): redaction must not eat evidence.

The three real repositories of `shared/corpus/real-history` come with their agents' sessions (98
Claude Code sessions of context-evaluator, 93 Claude Code and Codex sessions of git-sync, 45 of
oh-my-posh; 46 M characters of text). Their collector scanned them for secrets and found none, so
what redaction takes there is a false positive unless it is a literal password of a test fixture.
Each session is read unredacted and every text ingest would redact is scanned as ingest scans it.
On the code before issue 21 this redacted 1,189 / 0 / 603 values (git-sync / context-evaluator /
oh-my-posh), nearly all Go test names after `--- PASS:` and working directories after `PWD`.
"""

from __future__ import annotations

import re
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from habitus.capture.claude import read_claude
from habitus.capture.codex import read_codex
from habitus.capture.reader import detect_format, iter_trace_files
from habitus.capture.redact import scanned_texts
from habitus.capture.secret_scan import find_secrets

READERS = {"claude": read_claude, "codex": read_codex}
# Every value redacted on each history, reviewed one by one: literal passwords in git-sync's Go test fixtures
# (`username=alice\npassword=s3cret`, `Password: "tok"`, a credential helper's `password=tok=en`).
REVIEWED = {"context-evaluator": set(), "oh-my-posh": set(), "git-sync": {"s3cret", "tok", "tok=en", "stale"}}
# What is never a secret: a test name, a hash, a UUID, a path, a number, a word.
NOT_SECRETS = [re.compile(p) for p in (
    r"Test\w+(?:/\S+)?", r"\S*::test_\w+", r"[0-9a-f]{7,64}",
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    r"[~.]?/?(?:[\w.@-]+/)+[\w.@-]*", r"\d+", r"[a-z]+(?:[-_][a-z]+)*")]


def _redacted_values(folder: Path) -> tuple[Counter[str], int]:
    values: Counter[str] = Counter()
    chars = 0
    for path in iter_trace_files([folder]):
        reader = READERS.get(detect_format(path) or "")
        if reader is None:
            continue
        for trace in reader(path).traces:
            for text, context in scanned_texts(trace):
                chars += len(text)
                for finding in find_secrets(text, context=context):
                    values[text[finding.start:finding.end]] += 1
    return values, chars


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("history", sorted(REVIEWED))
def test_redaction_takes_nothing_but_reviewed_fixture_passwords_from_a_real_history(
        corpus: Path, tmp_path: Path, history: str) -> None:
    archive = corpus / "real-history" / history / "checkpoints.tar.xz"
    if not archive.is_file():
        pytest.skip(f"{archive} is absent")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    values, chars = _redacted_values(tmp_path)
    assert chars > 5_000_000, "the history was not read"
    wrong = [v for v in values if any(p.fullmatch(v.strip("\"'")) for p in NOT_SECRETS) and v not in REVIEWED[history]]
    assert not wrong, f"test names, hashes, paths or words redacted: {wrong[:20]}"
    assert set(values) <= REVIEWED[history], f"new redactions to review: {sorted(set(values) - REVIEWED[history])[:20]}"
