"""The pricing table: tolerant model-name matching and cost arithmetic."""

from __future__ import annotations

import json

import pytest

from habitus.core import Usage
from habitus.llm.pricing import all_prices, cost_of, get_price, normalize_model_name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4.1-2025-04-14", "gpt-4.1"),
        ("gpt-5.1-codex-mini", "gpt-5.1-codex-mini"),
        ("o3-mini-2025-01-31", "o3-mini"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("us.anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet"),
        ("claude-3-5-sonnet@20240620", "claude-3-5-sonnet"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("llama3.1:8b", "llama3"),
        ("qwen2.5-coder:32b", "qwen2.5"),
        ("claude-opus-4-6", "claude-opus-4-6"),
        ("claude-opus-4-6[1m]", "claude-opus-4-6"),
        ("claude-opus-4.8", "claude-opus-4-8"),
        ("claude-sonnet-4.6", "claude-sonnet-4-6"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-sonnet-5-5", "claude-sonnet-5-5"),
        ("gpt-5.3-codex", "gpt-5.3-codex"),
        ("gpt-5.1-codex-max", "gpt-5.1"),
        ("openai/gpt-5.4-mini", "gpt-5.4-mini"),
        ("gemini-3.1-pro-preview", "gemini-3.1-pro"),
    ],
)
def test_get_price_matches_model_name_variants(name: str, expected: str) -> None:
    price = get_price(name)
    assert price is not None, name
    assert price.model == expected


@pytest.mark.parametrize("name", ["gpt-4", "totally-unknown-model", "", "deepseek-v3", "gpt-4o-mini-search-preview",
                                  "claude-opus-4-9", "claude-sonnet-4-7-20270101", "gpt-5.9", "gpt-5.3-codex-spark",
                                  "claude-haiku-5-5"])
def test_a_model_not_in_the_table_has_no_price_rather_than_the_price_of_a_name_it_starts_with(name: str) -> None:
    assert get_price(name) is None


def test_claude_opus_4_6_costs_its_own_price_not_opus_4s() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_of(usage, "claude-opus-4-6") == pytest.approx(5 + 25)  # Opus 4 would be 15 + 75
    assert cost_of(usage, "claude-opus-4-20250514") == pytest.approx(15 + 75)


def test_normalize_model_name_strips_prefix_date_and_tag() -> None:
    assert normalize_model_name("OpenRouter/Anthropic/Claude-Sonnet-4.5") == "claude-sonnet-4-5"
    assert normalize_model_name("deepseek-v3") == "deepseek-v3"


def test_every_entry_has_date_provider_and_nonnegative_prices() -> None:
    prices = all_prices()
    assert len(prices) >= 50
    for p in prices:
        assert p.taken and p.provider in {"openai", "anthropic", "google", "local"}
        assert min(p.input, p.cached_input, p.cache_write, p.output) >= 0
        if p.provider == "anthropic":
            assert p.cache_write_1h is not None and p.cache_write_1h > p.cache_write > p.input > p.cached_input
            assert p.cache_min_tokens in (512, 1024, 2048, 4096)
        if p.taken == "2026-12-01":
            assert p.source and "http" in p.source, p.model  # every price checked today says where from


def test_cost_of_adds_each_token_class_at_its_rate() -> None:
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000,
                  output_tokens=1_000_000)
    # claude-sonnet-4-5: 3 + 0.30 + 3.75 + 15
    assert cost_of(usage, "claude-sonnet-4-5-20250929") == pytest.approx(22.05)
    # 1-hour writes cost 6.00 instead of 3.75
    assert cost_of(usage, "claude-sonnet-4-5", cache_ttl="1h") == pytest.approx(24.30)
    assert cost_of(Usage(input_tokens=1000, output_tokens=1000), "gpt-4o") == pytest.approx(0.0125)
    assert cost_of(usage, "llama3.3:70b") == 0.0
    assert cost_of(usage, "no-such-model") is None


def test_user_override_file_adds_and_replaces_prices(habitus_home) -> None:
    (habitus_home / "pricing.json").write_text(json.dumps({
        "taken": "2026-01-01",
        "models": {
            "gpt-4o": {"provider": "openai", "input": 1, "output": 2},
            "my-finetune": {"provider": "openai", "input": 7, "output": 9, "aliases": ["ft-mine"]},
        },
    }))
    assert get_price("gpt-4o").input == 1.0
    assert get_price("gpt-4o").cached_input == 1.0  # defaults to input when absent
    assert get_price("ft-mine").model == "my-finetune"
    assert get_price("ft-mine").taken == "2026-01-01"
