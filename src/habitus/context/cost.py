"""Cache-aware request cost: simulated prompt-cache hits from consecutive requests, priced per provider.

A request is a sequence of blocks (one per chat message: a content key and its token count). Cache
hits are *simulated*: the longest common prefix with an earlier request whose cache entry is still
within its time-to-live. Two provider rule sets:

- **automatic** (OpenAI style): every prompt of >= `min_prefix` tokens (1,024) is cached by itself;
  a hit is the longest common token prefix with any fresh earlier request, counted in 128-token
  steps above the first 1,024, billed at the model's cached-input rate. Nothing extra for writes.
- **explicit** (Anthropic style): the harness marks cache breakpoints. We model the usual coding-agent
  layout: one after the leading system messages and one at the end of every request. An entry is
  written only if its prefix has >= the model's minimum (1,024 to 4,096 tokens); a hit is the
  longest earlier breakpoint that is an exact prefix of this request. Writes cost 1.25x input
  (5-minute TTL) or 2x (1-hour TTL), reads 0.1x; a hit refreshes the entry's TTL.

Prefixes are tracked in a trie of block keys, so one request costs O(blocks), not O(requests).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from habitus.context.tokens import count_tokens

OPENAI_MIN_PREFIX = 1024
OPENAI_INCREMENT = 128
DEFAULT_TTL_S = {"automatic": 300.0, "explicit": 300.0}
ANTHROPIC_TTL_S = {"5m": 300.0, "1h": 3600.0}
PER_TOKENS = 1_000_000


@dataclass(frozen=True)
class Block:
    """One cacheable unit of a request (a message): `key` identifies its exact content."""

    key: str
    tokens: int
    text: str = ""  # kept for the token-level common prefix inside the first differing block

    @classmethod
    def of(cls, text: str, tokens: int | None = None) -> Block:
        digest = hashlib.blake2b(text.encode("utf-8", errors="replace"), digest_size=16).hexdigest()
        return cls(key=digest, tokens=count_tokens(text) if tokens is None else tokens, text=text)


@dataclass
class CacheRules:
    """How one provider caches prompts, and its prices (USD per million tokens; None = unknown)."""

    mode: str = "automatic"  # automatic | explicit | none
    min_prefix: int = OPENAI_MIN_PREFIX
    ttl_s: float = 300.0
    input_price: float | None = None
    cached_price: float | None = None
    write_price: float | None = None
    output_price: float | None = None
    provider: str = "unknown"
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def rules_for_model(model: str | None, *, anthropic_ttl: str = "5m", mode: str | None = None) -> CacheRules:
    """Caching rules and prices of `model` from the pricing table (automatic, unpriced when unknown)."""
    price = None
    if model:
        try:
            from habitus.llm.pricing import get_price
        except ImportError:  # the pricing table is optional for counting tokens
            get_price = None  # type: ignore[assignment]
        price = get_price(model) if get_price else None
    if price is None:
        return CacheRules(mode=mode or "automatic", model=model)
    provider = str(getattr(price, "provider", "unknown"))
    chosen = mode or ("explicit" if provider == "anthropic" else "none" if provider == "local" else "automatic")
    min_prefix = getattr(price, "cache_min_tokens", None) or getattr(price, "min_cache_prefix", None)
    write = price.cache_write
    if chosen == "explicit" and anthropic_ttl == "1h":
        write = getattr(price, "cache_write_1h", None) or price.input * 2.0
    elif chosen == "explicit" and not write:
        write = price.input * 1.25
    ttl = ANTHROPIC_TTL_S[anthropic_ttl] if chosen == "explicit" else DEFAULT_TTL_S["automatic"]
    return CacheRules(
        mode=chosen,
        min_prefix=int(min_prefix or OPENAI_MIN_PREFIX),
        ttl_s=ttl,
        input_price=price.input,
        cached_price=price.cached_input,
        write_price=write,
        output_price=price.output,
        provider=provider,
        model=getattr(price, "model", model),
    )


@dataclass
class RequestCost:
    """Tokens and cost of one request under the simulated cache."""

    input_tokens: int = 0  # every prompt token, cached or not
    cached_tokens: int = 0  # read from cache
    cache_write_tokens: int = 0  # written to cache (explicit mode)
    output_tokens: int = 0
    cost: float | None = None

    @property
    def uncached_tokens(self) -> int:
        return self.input_tokens - self.cached_tokens - self.cache_write_tokens


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    last_used: float = float("-inf")
    entry: bool = False  # an explicit cache entry (breakpoint) ends here
    depth_tokens: int = 0
    text: str = ""


class PrefixCache:
    """The simulated prompt cache of one session under one policy; feed it requests in time order."""

    def __init__(self, rules: CacheRules) -> None:
        self.rules = rules
        self.root = _Node()

    def _fresh(self, node: _Node, at: float) -> bool:
        return at - node.last_used <= self.rules.ttl_s

    def request(self, blocks: list[Block], at: float, output_tokens: int = 0, system_blocks: int = 0) -> RequestCost:
        """Simulate one request sent at time `at` (seconds); returns its tokens and cost."""
        total = sum(b.tokens for b in blocks)
        if self.rules.mode == "explicit":
            cached, written = self._explicit(blocks, at, total, system_blocks)
        elif self.rules.mode == "automatic":
            cached, written = self._automatic(blocks, at, total), 0
        else:
            cached, written = 0, 0
        result = RequestCost(input_tokens=total, cached_tokens=cached, cache_write_tokens=written,
                             output_tokens=output_tokens)
        result.cost = price_request(self.rules, result)
        return result

    def _automatic(self, blocks: list[Block], at: float, total: int) -> int:
        node, matched, diverged_at = self.root, 0, len(blocks)
        for i, block in enumerate(blocks):
            child = node.children.get(block.key)
            if child is None or not self._fresh(child, at):
                diverged_at = i
                break
            node, matched = child, matched + block.tokens
        if diverged_at < len(blocks):
            matched += self._partial(node, blocks[diverged_at], at)
        # write / refresh the whole prompt (OpenAI caches every prompt above the minimum)
        if total >= self.rules.min_prefix:
            self._insert(blocks, at, mark_entry=False)
        if matched < self.rules.min_prefix:
            return 0
        return self.rules.min_prefix + (matched - self.rules.min_prefix) // OPENAI_INCREMENT * OPENAI_INCREMENT

    def _partial(self, node: _Node, block: Block, at: float) -> int:
        """Tokens shared at the start of the first differing block with a fresh sibling (automatic mode)."""
        if not block.text:
            return 0
        best = ""
        fresh = [c for c in node.children.values() if c.text and self._fresh(c, at)]
        for child in sorted(fresh, key=lambda c: c.last_used, reverse=True)[:8]:
            n, limit = 0, min(len(child.text), len(block.text))
            while n < limit and child.text[n] == block.text[n]:
                n += 1
            if n > len(best):
                best = block.text[:n]
        # the last token of a shared string may continue differently, so it does not count
        return max(0, count_tokens(best) - 1) if best else 0

    def _explicit(self, blocks: list[Block], at: float, total: int, system_blocks: int) -> tuple[int, int]:
        node, depth, hit_node, hit = self.root, 0, None, 0
        for block in blocks:
            child = node.children.get(block.key)
            if child is None:
                break
            node, depth = child, depth + block.tokens
            if child.entry and self._fresh(child, at):
                hit_node, hit = child, depth
        if hit_node is not None:
            hit_node.last_used = at  # a hit refreshes the entry's TTL
        breakpoints = {len(blocks)}
        if 0 < system_blocks < len(blocks):
            breakpoints.add(system_blocks)
        written_to = hit
        node, depth = self.root, 0
        for i, block in enumerate(blocks, start=1):
            child = node.children.get(block.key)
            if child is None:
                child = node.children[block.key] = _Node(depth_tokens=depth + block.tokens, text=block.text)
            node, depth = child, depth + block.tokens
            if i in breakpoints and depth >= self.rules.min_prefix and depth > hit:
                if not (node.entry and self._fresh(node, at)):
                    written_to = max(written_to, depth)
                node.entry, node.last_used = True, at
        return hit, max(0, min(total, written_to) - hit)

    def _insert(self, blocks: list[Block], at: float, mark_entry: bool) -> None:
        node, depth = self.root, 0
        for block in blocks:
            child = node.children.get(block.key)
            depth += block.tokens
            if child is None:
                child = node.children[block.key] = _Node(depth_tokens=depth, text=block.text)
            child.last_used = at
            child.entry = child.entry or mark_entry
            node = child


def price_request(rules: CacheRules, req: RequestCost) -> float | None:
    """USD cost of one request: uncached input, cache reads, cache writes and output at the model's rates."""
    if rules.input_price is None or rules.output_price is None:
        return None
    cached_price = rules.cached_price if rules.cached_price is not None else rules.input_price
    write_price = rules.write_price if rules.write_price is not None else rules.input_price
    return (
        req.uncached_tokens * rules.input_price
        + req.cached_tokens * cached_price
        + req.cache_write_tokens * write_price
        + req.output_tokens * rules.output_price
    ) / PER_TOKENS
