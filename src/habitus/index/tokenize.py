"""A simple code-aware tokenizer: lowercase words, identifiers also split on camelCase and snake_case.

`getUserName` -> getusername, get, user, name; `MAX_RETRY_COUNT` -> max_retry_count, max, retry,
count; `src/http_server.py` -> src, http_server, http, server, py. Keeping the whole identifier
lets exact names match strongly while the parts let prose match code.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9_]+")
_PART = re.compile(r"[A-Z]+[0-9]*(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")


def tokenize(text: str) -> list[str]:
    """Tokens of `text` in order (identifiers followed by their parts when they split)."""
    tokens: list[str] = []
    for word in _WORD.findall(text or ""):
        whole = word.lower().strip("_")
        if not whole:
            continue
        tokens.append(whole)
        parts = [p.lower() for chunk in word.split("_") if chunk for p in _PART.findall(chunk)]
        if len(parts) > 1:
            tokens.extend(parts)
    return tokens
