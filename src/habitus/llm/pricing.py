"""Model prices as data: per-million-token prices for input, cache reads, cache writes and output.

The table ships as package data (`habitus/data/pricing.json`; each entry says when its price was
taken and from where). Two layers override it, later ones winning: `$HABITUS_HOME/pricing.json` in
the same format, and `[pricing."<model>"]` tables in `$HABITUS_HOME/config.toml`, written by
`habitus config set pricing.<model> ...` (see `set_price`).

Matching is tolerant of the ways one model's name is written (provider prefixes `anthropic/`,
`us.anthropic.`; dated suffixes `-20250929`, `-2024-08-06`, `@20240620`; tags `:8b`, `-v1:0`,
`-latest`; context variants `[1m]`; dots vs dashes `claude-sonnet-4.5`), and never guesses across
models: a name that is not in the table (say `claude-opus-4-9`) has no price, instead of the price of
a name it starts with (`claude-opus-4` costs three times as much). Callers report such usage as
unpriced, with the number of requests (`price_usage`, `price_trace`).

`Usage.input_tokens` counts *uncached* input (the Anthropic convention); providers convert.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from habitus.core import Trace, Usage
from habitus.store.home import habitus_home

PER_TOKENS = 1_000_000
PRICE_FIELDS = ("input", "cached_input", "cache_write", "cache_write_1h", "output")
CONFIG_SECTION = "pricing"

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
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def normalize_model_name(name: str) -> str:
    """Reduce a model name to the comparable core: no provider prefix, date, tag; dots as dashes."""
    s = name.strip().lower()
    s = re.sub(r"\[[^\]]*\]$", "", s)  # Claude Code's context variants: claude-opus-4-6[1m]
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


def _config_table(path: Path) -> dict[str, Any] | None:
    """The `[pricing]` tables of config.toml as a pricing table (`same_as` entries resolved later)."""
    from habitus.llm.config import ConfigError, load_config

    try:
        section = load_config(path).get(CONFIG_SECTION)
    except ConfigError:
        return None  # a broken config file is reported by `habitus config show`, not by every price lookup
    if not isinstance(section, dict):
        return None
    return {"taken": "config", "source": str(path),
            "models": {k: v for k, v in section.items() if isinstance(v, dict)}}


def _entry_price(key: str, entry: dict[str, Any], taken: Any, source: Any) -> ModelPrice:
    return ModelPrice(
        model=key,
        provider=str(entry.get("provider", "user")),
        input=float(entry.get("input", 0)),
        cached_input=float(entry.get("cached_input", entry.get("input", 0))),
        cache_write=float(entry.get("cache_write", entry.get("input", 0))),
        output=float(entry.get("output", 0)),
        cache_write_1h=None if entry.get("cache_write_1h") is None else float(entry["cache_write_1h"]),
        cache_min_tokens=entry.get("cache_min_tokens"),
        taken=entry.get("taken", taken),
        source=entry.get("source", source),
    )


@lru_cache(maxsize=8)
def _table(override: str, override_mtime: float, config: str,
           config_mtime: float) -> tuple[dict[str, ModelPrice], dict[str, str]]:
    """All prices by model key, and an index from normalized names/aliases to keys."""
    base = json.loads(resources.files("habitus").joinpath("data/pricing.json").read_text(encoding="utf-8"))
    tables = [base]
    if override_mtime:
        tables.append(_load_file(Path(override)))
    if config_mtime:
        tables.append(_config_table(Path(config)) or {"models": {}})
    prices: dict[str, ModelPrice] = {}
    index: dict[str, str] = {}
    for table in tables:
        for key, entry in table["models"].items():
            if "same_as" in entry:  # `habitus config set pricing.<model> <known model>`
                target = index.get(normalize_model_name(str(entry["same_as"])))
                if target is None:
                    continue
                prices[key] = ModelPrice(**{**prices[target].to_dict(), "model": key, "taken": table.get("taken"),
                                            "source": f"same as {target}"})
            else:
                prices[key] = _entry_price(key, entry, table.get("taken"), table.get("source"))
            for alias in [key, *entry.get("aliases", [])]:
                index[normalize_model_name(alias)] = key
    return prices, index


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _current_table() -> tuple[dict[str, ModelPrice], dict[str, str]]:
    override, config = habitus_home() / "pricing.json", habitus_home() / "config.toml"
    return _table(str(override), _mtime(override), str(config), _mtime(config))


def all_prices() -> list[ModelPrice]:
    """Every model in the table (package data plus the user's overrides), sorted by provider and name."""
    prices, _ = _current_table()
    return sorted(prices.values(), key=lambda p: (p.provider, p.model))


def get_price(model: str | None) -> ModelPrice | None:
    """The price of `model` (by name or alias, in any of its spellings), or None when the table has none."""
    if not model:
        return None
    prices, index = _current_table()
    key = index.get(normalize_model_name(model))
    return prices[key] if key else None


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


@dataclass
class PricedUsage:
    """What some usage cost: the priced part in USD, and what could not be priced, per model."""

    cost: float | None = None  # None when nothing could be priced
    priced_requests: int = 0
    unpriced_requests: Counter[str] = field(default_factory=Counter)  # model -> requests without a price
    unpriced_tokens: Counter[str] = field(default_factory=Counter)  # model -> their tokens
    by_model: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, model: str, usage: Usage, requests: int, recorded_cost: float | None = None) -> None:
        row = self.by_model.setdefault(model, {"requests": 0, "tokens": 0, "cost": None})
        row["requests"] += requests
        row["tokens"] += usage.total_tokens
        cost = recorded_cost if recorded_cost is not None else cost_of(usage, model)
        if cost is None:
            if usage.total_tokens or requests:
                self.unpriced_requests[model] += requests
                self.unpriced_tokens[model] += usage.total_tokens
            return
        row["cost"] = (row["cost"] or 0.0) + cost
        self.cost = (self.cost or 0.0) + cost
        self.priced_requests += requests

    def merge(self, other: PricedUsage) -> None:
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost
        self.priced_requests += other.priced_requests
        self.unpriced_requests.update(other.unpriced_requests)
        self.unpriced_tokens.update(other.unpriced_tokens)
        for model, row in other.by_model.items():
            mine = self.by_model.setdefault(model, {"requests": 0, "tokens": 0, "cost": None})
            mine["requests"] += row["requests"]
            mine["tokens"] += row["tokens"]
            if row["cost"] is not None:
                mine["cost"] = (mine["cost"] or 0.0) + row["cost"]

    def to_dict(self) -> dict[str, Any]:
        return {"cost": None if self.cost is None else round(self.cost, 6), "priced_requests": self.priced_requests,
                "unpriced": {m: {"requests": n, "tokens": self.unpriced_tokens[m]}
                             for m, n in sorted(self.unpriced_requests.items())},
                "by_model": {m: {**row, "cost": None if row["cost"] is None else round(row["cost"], 6)}
                             for m, row in sorted(self.by_model.items())}}


def describe_cost(cost: float | None, unpriced: dict[str, dict[str, int]]) -> str:
    """`$0.4213`, then what had no price: `+ unpriced: gpt-x (12 requests)`; `-` when nothing was priced.

    `unpriced` is `PricedUsage.to_dict()["unpriced"]`: model -> {requests, tokens}.
    """
    text = "-" if cost is None else f"${cost:.4f}"
    if unpriced:
        text += " + unpriced: " + ", ".join(
            f"{m} ({r['requests']:,} request{'s' if r['requests'] != 1 else ''})" if r.get("requests")
            else f"{m} ({r.get('tokens', 0):,} tokens)" for m, r in unpriced.items())
    return text


def price_usage(rows: Iterable[tuple[str | None, Usage, int]]) -> PricedUsage:
    """Price `(model, usage, requests)` rows; a model without a price is counted as unpriced, never guessed."""
    priced = PricedUsage()
    for model, usage, requests in rows:
        priced.add(model or "<unknown model>", usage, requests, usage.cost)
    return priced


def price_trace(trace: Trace) -> PricedUsage:
    """What a recorded session cost, per model.

    A step's usage is one request, on the step's own model (`meta.model`, set by readers when a
    subagent or a model switch ran elsewhere) or the trace's; a cost the agent recorded itself
    (aider) is taken as is. Usage the trace has beyond its steps' (Codex's cumulative totals) is
    priced on the trace's model. A reader that knows usage per model (`meta.usage_by_model`,
    Copilot CLI) is priced from that.
    """
    by_model = trace.meta.get("usage_by_model")
    if isinstance(by_model, dict) and by_model:
        return price_usage((model, Usage.from_dict(row), int(row.get("requests") or 0))
                           for model, row in by_model.items() if isinstance(row, dict))
    rows: list[tuple[str | None, Usage, int]] = []
    seen = Usage()
    for step in trace.steps:
        if step.usage is None:
            continue
        rows.append((step.meta.get("model") or trace.model, step.usage, 1))
        seen.add(step.usage)
    rest = Usage(input_tokens=max(trace.usage.input_tokens - seen.input_tokens, 0),
                 cache_read_tokens=max(trace.usage.cache_read_tokens - seen.cache_read_tokens, 0),
                 cache_write_tokens=max(trace.usage.cache_write_tokens - seen.cache_write_tokens, 0),
                 output_tokens=max(trace.usage.output_tokens - seen.output_tokens, 0))
    if rest.total_tokens:
        rows.append((trace.model, rest, 0 if rows else 1))
    return price_usage(rows)


def parse_price(model: str, text: str) -> dict[str, Any]:
    """The config entry for `habitus config set pricing.<model> TEXT`.

    TEXT is either `input=5 output=25 [cached_input=0.5] [cache_write=6.25] [cache_write_1h=10]`
    (USD per million tokens; commas or spaces between) or the name of a model the table prices,
    to price `model` the same way.
    """
    text = text.strip()
    if "=" not in text:
        if get_price(text) is None:
            raise ValueError(f"pricing.{model}: {text!r} is neither prices (input=… output=…) nor a priced model")
        return {"same_as": text}
    entry: dict[str, Any] = {}
    for part in re.split(r"[\s,]+", text):
        if not part:
            continue
        name, _, value = part.partition("=")
        if name not in PRICE_FIELDS and name != "provider":
            raise ValueError(f"pricing.{model}: unknown field {name!r} (known: {', '.join(PRICE_FIELDS)}, provider)")
        if name == "provider":
            entry[name] = value
            continue
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"pricing.{model}: {name} must be USD per million tokens, got {value!r}") from None
        if number < 0:
            raise ValueError(f"pricing.{model}: {name} cannot be negative")
        entry[name] = number
    if "input" not in entry or "output" not in entry:
        raise ValueError(f"pricing.{model}: give at least input=… and output=… (USD per million tokens)")
    return entry


def set_price(model: str, text: str | None, path: Path | None = None) -> dict[str, Any] | None:
    """Write (or with `text=None` remove) the price of `model` in config.toml; returns the stored entry."""
    from habitus.llm.config import config_path, load_config, write_config

    model = model.strip()
    if not model or any(c in model for c in "\n\"[]"):
        raise ValueError(f"pricing.<model>: {model!r} is not a model name")
    path = path or config_path()
    data = load_config(path)
    section = data.setdefault(CONFIG_SECTION, {})
    if not isinstance(section, dict):
        raise ValueError(f"{path}: [{CONFIG_SECTION}] is a value, not a table")
    entry = None if text is None else parse_price(model, text)
    if entry is None:
        section.pop(model, None)
    else:
        section[model] = entry
    write_config(data, path)
    return entry
