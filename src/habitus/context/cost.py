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
from dataclasses import asdict, dataclass
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
    """Caching rules and prices of `model` from the pricing table (automatic, unpriced when unknown).

    `anthropic_ttl` is 5m or 1h (anything else, such as an unresolved 'auto', means 5m).
    """
    anthropic_ttl = anthropic_ttl if anthropic_ttl in ANTHROPIC_TTL_S else "5m"
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


class _Node:
    """A trie node: one block after the path that leads to it."""

    __slots__ = ("children", "last_used", "entry", "text")

    def __init__(self, text: str = "") -> None:
        self.children: dict[str, _Node] = {}
        self.last_used = float("-inf")
        self.entry = False  # an explicit cache entry (breakpoint) ends here
        self.text = text


def common_prefix_len(a: list[Any] | str, b: list[Any] | str) -> int:
    """Length of the common prefix of two sequences, by binary search on slice equality (C-speed compares)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # invariant: a[:lo] == b[:lo] and a[:hi] != b[:hi]
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixCache:
    """The simulated prompt cache of one session under one policy; feed it requests in time order.

    The previous request's trie path is kept, so a request that extends it (the usual case) only
    walks its new blocks.
    """

    def __init__(self, rules: CacheRules) -> None:
        self.rules = rules
        self.root = _Node()
        self._keys: list[str] = []
        self._path: list[_Node] = []
        self._depths: list[int] = []  # cumulative tokens along the previous path
        self._at = float("-inf")
        self._refreshed = False  # automatic mode: the previous path was refreshed at self._at

    def request(self, blocks: list[Block], at: float, output_tokens: int = 0, system_blocks: int = 0) -> RequestCost:
        """Simulate one request sent at time `at` (seconds); returns its tokens and cost."""
        keys = [b.key for b in blocks]
        k = common_prefix_len(keys, self._keys) if self._keys else 0
        path = self._path[:k]
        depths = self._depths[:k]
        node = path[-1] if path else self.root
        depth = depths[-1] if depths else 0
        # extend the path through nodes that exist already, then create the rest
        matched_nodes = k
        for block in blocks[k:]:
            child = node.children.get(block.key)
            if child is None:
                break
            node, depth = child, depth + block.tokens
            path.append(child)
            depths.append(depth)
            matched_nodes += 1
        for block in blocks[matched_nodes:]:
            child = node.children[block.key] = _Node(block.text)
            node, depth = child, depth + block.tokens
            path.append(child)
            depths.append(depth)
        total = depths[-1] if depths else 0
        if self.rules.mode == "explicit":
            cached, written = self._explicit(path, depths, matched_nodes, at, total, system_blocks)
        elif self.rules.mode == "automatic":
            cached, written = self._automatic(blocks, path, depths, k, matched_nodes, at, total), 0
        else:
            cached, written = 0, 0
        self._keys, self._path, self._depths, self._at = keys, path, depths, at
        result = RequestCost(input_tokens=total, cached_tokens=cached, cache_write_tokens=written,
                             output_tokens=output_tokens)
        result.cost = price_request(self.rules, result)
        return result

    def _automatic(self, blocks: list[Block], path: list[_Node], depths: list[int], k: int, existing: int,
                   at: float, total: int) -> int:
        ttl = self.rules.ttl_s
        # the shared part with the previous request is fresh as a whole when that request refreshed it in time
        fresh = k if (self._refreshed and at - self._at <= ttl) else 0
        while fresh < existing and at - path[fresh].last_used <= ttl:
            fresh += 1
        matched = depths[fresh - 1] if fresh else 0
        if fresh < len(blocks):
            parent = path[fresh - 1] if fresh else self.root
            matched += self._partial(parent, blocks[fresh], at)
        self._refreshed = total >= self.rules.min_prefix
        if self._refreshed:  # OpenAI caches every prompt above the minimum: write / refresh the whole path
            for node in path:
                node.last_used = at
        if matched < self.rules.min_prefix:
            return 0
        return self.rules.min_prefix + (matched - self.rules.min_prefix) // OPENAI_INCREMENT * OPENAI_INCREMENT

    def _partial(self, parent: _Node, block: Block, at: float) -> int:
        """Tokens shared at the start of the first differing block with a fresh sibling (automatic mode)."""
        if not block.text:
            return 0
        best = 0
        fresh = [c for c in parent.children.values() if c.text and at - c.last_used <= self.rules.ttl_s]
        for child in sorted(fresh, key=lambda c: c.last_used, reverse=True)[:8]:
            if child.text is not block.text:
                best = max(best, common_prefix_len(child.text, block.text))
        # the last token of a shared string may continue differently, so it does not count
        return max(0, count_tokens(block.text[:best]) - 1) if best else 0

    def _explicit(self, path: list[_Node], depths: list[int], existing: int, at: float, total: int,
                  system_blocks: int) -> tuple[int, int]:
        ttl = self.rules.ttl_s
        hit = 0
        for i in range(existing - 1, -1, -1):  # the deepest fresh entry on the matched path
            node = path[i]
            if node.entry and at - node.last_used <= ttl:
                node.last_used = at  # a hit refreshes the entry's TTL
                hit = depths[i]
                break
        written_to = hit
        for i in {len(path) - 1, system_blocks - 1}:
            if i < 0 or i >= len(path) or depths[i] < self.rules.min_prefix or depths[i] <= hit:
                continue
            node = path[i]
            if not (node.entry and at - node.last_used <= ttl):
                written_to = max(written_to, depths[i])
            node.entry, node.last_used = True, at
        return hit, max(0, min(total, written_to) - hit)


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
