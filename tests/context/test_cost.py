"""Cache-aware cost: hand-computed prices for OpenAI-style automatic and Anthropic-style explicit caching."""

from __future__ import annotations

import pytest

from habitus.context.cost import Block, CacheRules, PrefixCache, RequestCost, price_request, rules_for_model
from habitus.context.tokens import count_tokens, tokenizer_name

# Prices per million tokens, as in the pricing table (taken 2025-11-24).
GPT_4O = CacheRules(mode="automatic", min_prefix=1024, ttl_s=300, input_price=2.5, cached_price=1.25,
                    write_price=2.5, output_price=10.0, provider="openai", model="gpt-4o")
SONNET_45 = CacheRules(mode="explicit", min_prefix=1024, ttl_s=300, input_price=3.0, cached_price=0.3,
                       write_price=3.75, output_price=15.0, provider="anthropic", model="claude-sonnet-4-5")


def b(name: str, tokens: int) -> Block:
    return Block(key=name, tokens=tokens)


def test_rules_come_from_the_pricing_table():
    sonnet = rules_for_model("claude-sonnet-4-5-20250929")
    assert (sonnet.mode, sonnet.min_prefix, sonnet.write_price, sonnet.cached_price) == ("explicit", 1024, 3.75, 0.3)
    assert rules_for_model("claude-sonnet-4-5", anthropic_ttl="1h").write_price == 6.0
    assert rules_for_model("claude-sonnet-4-5", anthropic_ttl="1h").ttl_s == 3600
    assert rules_for_model("claude-haiku-4-5").min_prefix == 4096
    gpt = rules_for_model("gpt-4o")
    assert (gpt.mode, gpt.min_prefix, gpt.cached_price) == ("automatic", 1024, 1.25)
    unknown = rules_for_model("no-such-model-xyz")
    assert unknown.input_price is None and unknown.mode == "automatic"


@pytest.mark.parametrize(
    ("first", "second", "gap_s", "cached", "cost"),
    [
        # 2,000 shared tokens: 1,024 + 7 x 128 = 1,920 cached; 580 uncached. (580*2.5 + 1920*1.25) / 1e6
        ([b("s", 2000)], [b("s", 2000), b("u", 500)], 60, 1920, 0.00385),
        # a shared prefix under 1,024 tokens is never cached: 1500 * 2.5 / 1e6
        ([b("s", 1000)], [b("s", 1000), b("u", 500)], 60, 0, 0.00375),
        # past the 5-minute TTL the prefix is gone: 2500 * 2.5 / 1e6
        ([b("s", 2000)], [b("s", 2000), b("u", 500)], 301, 0, 0.00625),
        # pruning a middle block: only the 1,500-token system block still matches -> 1,024 + 3 x 128 = 1,408
        ([b("s", 1500), b("a", 800), b("x", 300)], [b("s", 1500), b("x", 300), b("c", 200)], 60, 1408,
         (592 * 2.5 + 1408 * 1.25) / 1e6),
    ],
)
def test_openai_automatic_prefix_caching(first, second, gap_s, cached, cost):
    cache = PrefixCache(GPT_4O)
    r1 = cache.request(first, at=0.0, output_tokens=100)
    assert r1.cached_tokens == 0
    assert r1.cost == pytest.approx((sum(x.tokens for x in first) * 2.5 + 100 * 10.0) / 1e6)
    r2 = cache.request(second, at=float(gap_s))
    assert r2.cached_tokens == cached
    assert r2.cache_write_tokens == 0
    assert r2.cost == pytest.approx(cost)


def test_openai_caching_counts_the_shared_start_of_a_changed_message():
    text = " ".join(f"word{i}" for i in range(700))
    tokens = count_tokens(text)
    assert tokens > 1100
    cache = PrefixCache(GPT_4O)
    cache.request([Block.of(text)], at=0.0)
    second = cache.request([Block.of(text + " and then a different ending")], at=1.0)
    assert second.cached_tokens == 1024 + (tokens - 1 - 1024) // 128 * 128


def test_a_hit_refreshes_the_ttl():
    cache = PrefixCache(GPT_4O)
    cache.request([b("s", 2000)], at=0)
    assert cache.request([b("s", 2000), b("u", 10)], at=250).cached_tokens == 1920
    assert cache.request([b("s", 2000), b("v", 10)], at=500).cached_tokens == 1920  # 250 s after the refresh


def test_anthropic_explicit_caching_writes_reads_and_minimum():
    cache = PrefixCache(SONNET_45)
    # first request: everything written at 1.25x (3.75/M): 1500 * 3.75 / 1e6
    r1 = cache.request([b("sys", 1200), b("u", 300)], at=0, system_blocks=1)
    assert (r1.cached_tokens, r1.cache_write_tokens) == (0, 1500)
    assert r1.cost == pytest.approx(0.005625)
    # next turn: the whole previous request is read at 0.1x, the new 200 tokens written
    r2 = cache.request([b("sys", 1200), b("u", 300), b("a", 200)], at=60, system_blocks=1)
    assert (r2.cached_tokens, r2.cache_write_tokens) == (1500, 200)
    assert r2.cost == pytest.approx((1500 * 0.3 + 200 * 3.75) / 1e6)
    # pruned history: only the system breakpoint still matches
    r3 = cache.request([b("sys", 1200), b("a", 200)], at=120, system_blocks=1)
    assert (r3.cached_tokens, r3.cache_write_tokens) == (1200, 200)
    assert r3.cost == pytest.approx((1200 * 0.3 + 200 * 3.75) / 1e6)
    # after the 5-minute TTL nothing hits: all written again
    r4 = cache.request([b("sys", 1200), b("a", 200)], at=120 + 301, system_blocks=1)
    assert (r4.cached_tokens, r4.cache_write_tokens) == (0, 1400)


def test_anthropic_no_cache_below_the_model_minimum():
    cache = PrefixCache(SONNET_45)
    for at in (0, 10):
        r = cache.request([b("sys", 500), b("u", 300)], at=at, system_blocks=1)
        assert (r.cached_tokens, r.cache_write_tokens) == (0, 0)
        assert r.cost == pytest.approx(800 * 3.0 / 1e6)


def test_anthropic_explicit_hits_only_at_breakpoints_not_partial_prefixes():
    cache = PrefixCache(SONNET_45)
    cache.request([b("sys", 200), b("a", 1000), b("b", 500)], at=0, system_blocks=1)
    # the first two blocks match, but no breakpoint was written after them
    r = cache.request([b("sys", 200), b("a", 1000), b("c", 500)], at=10, system_blocks=1)
    assert r.cached_tokens == 0 and r.cache_write_tokens == 1700


def test_anthropic_one_hour_ttl_costs_2x_to_write_and_survives_longer():
    rules = rules_for_model("claude-sonnet-4-5", anthropic_ttl="1h")
    cache = PrefixCache(rules)
    r1 = cache.request([b("sys", 1500)], at=0, system_blocks=1)
    assert r1.cost == pytest.approx(1500 * 6.0 / 1e6)
    r2 = cache.request([b("sys", 1500), b("u", 100)], at=1800, system_blocks=1)
    assert (r2.cached_tokens, r2.cache_write_tokens) == (1500, 100)
    assert r2.cost == pytest.approx((1500 * 0.3 + 100 * 6.0) / 1e6)


def test_unknown_price_gives_no_cost_but_still_counts_tokens():
    rules = CacheRules(mode="automatic")
    req = PrefixCache(rules).request([b("s", 2000)], at=0, output_tokens=10)
    assert req.input_tokens == 2000 and req.cost is None
    assert price_request(rules, RequestCost(input_tokens=1)) is None


def test_offline_tokenizer_is_used_and_named():
    assert "tiktoken" in tokenizer_name()
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def test_estimate_is_the_fallback_when_no_tokenizer_loads(monkeypatch):
    from habitus.context import tokens

    tokens._encoding.cache_clear()
    monkeypatch.setenv("HABITUS_TOKENIZER", "estimate")
    try:
        assert tokenizer_name().startswith("estimate")
        assert count_tokens("x" * 320) == round(320 / tokens.ESTIMATE_CHARS_PER_TOKEN)
    finally:
        tokens._encoding.cache_clear()
