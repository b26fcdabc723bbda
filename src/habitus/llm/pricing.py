"""Model prices as data: per-million-token prices for input, cache reads, cache writes and output.

The table ships as package data (`habitus/data/pricing.json`, with the date it was taken) and can
be extended or overridden by `$HABITUS_HOME/pricing.json` in the same format. Matching is tolerant
of the ways model names appear in traces and configs: provider prefixes (`anthropic/`,
`us.anthropic.`), dated suffixes (`-20250929`, `-2024-08-06`, `@20240620`), version tags (`:8b`,
`-v1:0`, `-latest`) and dots vs dashes (`claude-sonnet-4.5`).

`Usage.input_tokens` counts *uncached* input (the Anthropic convention); providers convert.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from habitus.core import Usage
from habitus.store.home import habitus_home

PER_TOKENS = 1_000_000

_DATE_SUFFIX = re.compile(r"(-\d{8}-v\d+|-\d{8}|-\d{4}-\d{2}-\d{2}|-\d{4}|-latest)$")


@dataclass(frozen=True)
class ModelPrice:
    """Prices in USD per million tokens for one model (cache_write is the 5-minute write)."""

    model: str
    provider: str
    input: float
    cached_input: float
    cache_write: float
    output: float
    cache_write_1h: float | None = None
    cache_min_tokens: int | None = None
    taken: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def normalize_model_name(name: str) -> str:
    """Reduce a model name to the comparable core: no provider prefix, date, tag; dots as dashes."""
    s = name.strip().lower()
    s = s.rsplit("/", 1)[-1]
    # Bedrock ids: "us.anthropic.claude-3-5-sonnet-20240620-v1:0"
    if "anthropic." in s:
        s = s.split("anthropic.", 1)[1]
    s = s.split("@", 1)[0]  # Vertex: claude-3-5-sonnet@20240620
    s = s.split(":", 1)[0]  # Ollama tags (:8b, :latest), Bedrock (:0)
    previous = None
    while previous != s:
        previous = s
        s = _DATE_SUFFIX.sub("", s)
    return s.replace(".", "-").replace("_", "-")


def _load_file(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ValueError(f"{path}: not a pricing table (expected an object with 'models')")
    return data


@lru_cache(maxsize=8)
def _table(override: str, override_mtime: float) -> tuple[dict[str, ModelPrice], dict[str, str]]:
    """All prices by model key, and an index from normalized names/aliases to keys."""
    base = json.loads(resources.files("habitus").joinpath("data/pricing.json").read_text(encoding="utf-8"))
    tables = [base]
    if override_mtime:
        tables.append(_load_file(Path(override)))
    prices: dict[str, ModelPrice] = {}
    index: dict[str, str] = {}
    for table in tables:
        taken = table.get("taken")
        for key, entry in table["models"].items():
            prices[key] = ModelPrice(
                model=key,
                provider=str(entry.get("provider", "unknown")),
                input=float(entry.get("input", 0)),
                cached_input=float(entry.get("cached_input", entry.get("input", 0))),
                cache_write=float(entry.get("cache_write", entry.get("input", 0))),
                output=float(entry.get("output", 0)),
                cache_write_1h=None if entry.get("cache_write_1h") is None else float(entry["cache_write_1h"]),
                cache_min_tokens=entry.get("cache_min_tokens"),
                taken=entry.get("taken", taken),
            )
            for alias in [key, *entry.get("aliases", [])]:
                index[normalize_model_name(alias)] = key
    return prices, index


def _current_table() -> tuple[dict[str, ModelPrice], dict[str, str]]:
    override = habitus_home() / "pricing.json"
    try:
        mtime = override.stat().st_mtime
    except OSError:
        mtime = 0.0
    return _table(str(override), mtime)


def all_prices() -> list[ModelPrice]:
    """Every model in the table (package data plus the user's override), sorted by provider and name."""
    prices, _ = _current_table()
    return sorted(prices.values(), key=lambda p: (p.provider, p.model))


def get_price(model: str | None) -> ModelPrice | None:
    """The price of `model`, or None when it is unknown.

    Exact name or alias first, then the longest known name that prefixes it at a dash boundary
    (so `gpt-4o-mini-search-preview` prices as `gpt-4o-mini`, never as `gpt-4o`).
    """
    if not model:
        return None
    prices, index = _current_table()
    name = normalize_model_name(model)
    if name in index:
        return prices[index[name]]
    best = None
    for known, key in index.items():
        if name.startswith(known + "-") and (best is None or len(known) > len(best[0])):
            best = (known, key)
    return prices[best[1]] if best else None


def cost_of(usage: Usage, model: str | ModelPrice | None, *, cache_ttl: str = "5m") -> float | None:
    """US dollars for `usage` on `model`; None when the model has no known price.

    `cache_ttl="1h"` prices cache writes at the 1-hour rate where the provider has one.
    """
    price = model if isinstance(model, ModelPrice) else get_price(model)
    if price is None:
        return None
    write = price.cache_write
    if cache_ttl == "1h" and price.cache_write_1h is not None:
        write = price.cache_write_1h
    total = (
        usage.input_tokens * price.input
        + usage.cache_read_tokens * price.cached_input
        + usage.cache_write_tokens * write
        + usage.output_tokens * price.output
    )
    return total / PER_TOKENS
