"""The token rules redaction runs: gitleaks' full default rule set plus habitus' own, from one vendored rule book.

`src/habitus/data/secrets/rules.json` is generated (`scripts/update_secret_rules.py`) from the
vendored upstream file `gitleaks.toml` (version, source URL, licence and SHA-256 in the book's
`sources`) and from `habitus.toml` (providers upstream lacks, in the same format). It is loaded
once per process (~2 ms) and each rule's pattern compiles the first time one of its keywords occurs.

`rule_findings(index, text)` applies a rule as gitleaks does: the secret is the rule's secret group
(else the first non-empty group, else the whole match); a rule with an entropy threshold keeps only
secrets whose Shannon entropy is above it (and a `generic…` rule only secrets with a digit); the
rule's allowlists (regexes on the secret, the match or the line; stopwords) and the global ones
drop the rest. A rule every match of which starts with one of its keywords (the book's `anchored`
form, see `secret_translate`) is matched at each place a keyword starts instead of scanned across
the text: the same secrets, in time proportional to the keyword hits, not to the text (rules keyed
by `ey`, `s.` or `key` would otherwise scan most texts).
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any, NamedTuple

from habitus.capture.secret_names import fixture_value, looks_random, shannon_entropy

# gitleaks' end-of-token check, as translated: a quote, space or `;` after the token, or the end.
_TERMINATOR = "(?:[\\x60'\"\\s;]|\\\\[nr]|\\Z)"

class Finding(NamedTuple):
    """A secret at `start:end` of the scanned text; `kind` names the rule (`github_pat`, `password`)."""

    start: int
    end: int
    kind: str


@functools.cache
def rulebook() -> dict[str, Any]:
    """The vendored rule book (see the module docstring)."""
    # a path, not importlib.resources: this runs on the hook path, where importing that costs more than the load
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "secrets", "rules.json")
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def rules() -> list[dict[str, Any]]:
    return rulebook()["rules"]


def kind_of(index: int) -> str:
    return rules()[index]["id"].replace("-", "_").replace(".", "_")


@functools.cache
def _compiled(index: int) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    """(pattern, anchored pattern or None): the anchored one is matched where a keyword starts."""
    rule = rules()[index]
    anchored = re.compile(rule["anchored"], re.ASCII) if rule["anchored"] else None
    return re.compile(rule["regex"], re.ASCII), anchored


@functools.cache
def _allow_patterns(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.ASCII)


def _allowed(allowlists: list[dict[str, Any]], secret: str, match: str, line: str) -> bool:
    targets = {"secret": secret, "match": match, "line": line}
    lowered = secret.lower()
    for allow in allowlists:
        by_regex = [bool(_allow_patterns(r).search(targets.get(allow["target"], secret))) for r in allow["regexes"]]
        by_word = [any(word in lowered for word in allow["stopwords"])] if allow["stopwords"] else []
        checks = [any(by_regex)] if by_regex else []
        checks += by_word
        if checks and (all(checks) if allow["condition"] == "AND" else any(checks)):
            return True
    return False


def _line_of(text: str, start: int, end: int) -> str:
    return text[text.rfind("\n", 0, start) + 1:(text.find("\n", end) + 1 or len(text) + 1) - 1]


def _finding(index: int, rule: dict[str, Any], match: re.Match[str], text: str) -> Finding | None:
    group = rule["secret_group"]
    if group and group <= (match.re.groups or 0):
        span = match.span(group)
    else:
        span = next((match.span(g) for g in range(1, (match.re.groups or 0) + 1) if match.group(g)), match.span())
    if span[0] < 0 or span[1] <= span[0]:
        return None
    secret = text[span[0]:span[1]]
    if fixture_value(secret.strip("\"'")):
        return None  # `Bearer test-token`, `password = "helper-secret"`: made up, not a credential
    if rule["entropy"]:
        if shannon_entropy(secret) <= rule["entropy"]:
            return None
        if rule["id"].startswith("generic") and not any(c.isdigit() for c in secret):
            return None  # gitleaks' own condition for its generic rules
    whole = match.group(0)
    if rule["allowlists"] or rulebook()["global_allowlists"]:
        line = _line_of(text, match.start(), match.end())
        if _allowed(rule["allowlists"], secret, whole, line) or _allowed(rulebook()["global_allowlists"], secret,
                                                                          whole, line):
            return None
    return Finding(span[0], span[1], kind_of(index))


@functools.cache
def _starts_at_word_boundary(index: int) -> bool:
    """Whether rule `index`'s anchored pattern starts with `\\b` or a lookbehind for no word character."""
    regex = rules()[index]["anchored"] or ""
    return regex.startswith(("\\b", "(?<![A-Za-z0-9_])", "(?<![A-Za-z0-9_\\-])"))


def anchored_pattern(index: int) -> re.Pattern[str] | None:
    return _compiled(index)[1]


@functools.cache
def _loose(index: int) -> re.Pattern[str]:
    """A token rule's anchored pattern without its end-of-token check: for a key longer than its usual length."""
    regex = rules()[index]["anchored"].replace(_TERMINATOR, "")
    return re.compile(regex[:-2] if regex.endswith("\\b") else regex, re.ASCII)


def _token_end(text: str, end: int) -> int:
    while end < len(text) and (text[end].isalnum() or text[end] in "_-") and text[end].isascii():
        end += 1
    return end


@functools.cache
def is_token_rule(index: int) -> bool:
    """Whether rule `index` matches one token (no spaces): one a terminal line wrap can cut in two."""
    regex = rules()[index]["anchored"] or ""
    body = regex.replace(_TERMINATOR, "")
    return bool(regex) and not any(part in body for part in ("\\s", " ", "\\t", "\\n", "[\\s"))


def rule_findings(index: int, text: str, hits: list[int]) -> list[Finding]:
    """The secrets rule `index` finds in `text`, given the offsets where its keywords occur (`hits`)."""
    rule = rules()[index]
    pattern, anchored = _compiled(index)
    found = []
    if anchored is not None:
        last_end = -1
        bounded = _starts_at_word_boundary(index)
        for hit in sorted(hits):
            if hit < last_end or (bounded and hit and (text[hit - 1].isalnum() or text[hit - 1] == "_")):
                continue  # inside a word (`items.get` for `s.`): the rule's own boundary check fails
            match = anchored.match(text, hit)
            if match is None and is_token_rule(index):
                match = _loose(index).match(text, hit)  # the token runs on past the rule's length: take it all
                finding = _finding(index, rule, match, text) if match is not None else None
                if finding is not None and looks_random(text[finding.start:_token_end(text, finding.end)]):
                    found.append(Finding(finding.start, _token_end(text, finding.end), finding.kind))
                    last_end = found[-1].end
                continue
            if match is not None:
                last_end = match.end()
                finding = _finding(index, rule, match, text)
                if finding is not None:
                    found.append(finding)
        return found
    for match in pattern.finditer(text):
        finding = _finding(index, rule, match, text)
        if finding is not None:
            found.append(finding)
    return found


__all__ = ["Finding", "anchored_pattern", "is_token_rule", "kind_of", "rule_findings", "rulebook",
           "rules"]
