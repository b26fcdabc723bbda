"""Configuration: file + environment precedence, TOML round trip, masked keys, and the `habitus config` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from llm_stubs import Reply, openai_answer, stub_server

from habitus.llm.config import ConfigError, describe, dumps_toml, load_llm_config, set_value
from habitus.llm.providers import get_provider

HABITUS = [sys.executable, "-m", "habitus"]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*HABITUS, *args], capture_output=True, text=True, env=full_env, timeout=60)


def test_defaults_are_the_none_provider_with_default_caps(monkeypatch) -> None:
    monkeypatch.delenv("HABITUS_LLM", raising=False)
    cfg = load_llm_config()
    assert (cfg.provider, cfg.max_calls, cfg.max_cost) == ("none", 100, 1.0)
    assert get_provider().name == "none"


def test_environment_overrides_the_config_file(monkeypatch) -> None:
    set_value("llm.provider", "anthropic")
    set_value("llm.model", "claude-opus-4-5")
    set_value("llm.max_calls", "7")
    monkeypatch.delenv("HABITUS_LLM")
    assert load_llm_config().provider == "anthropic"
    monkeypatch.setenv("HABITUS_LLM", "ollama")
    monkeypatch.setenv("HABITUS_LLM_MODEL", "qwen3:8b")
    cfg = load_llm_config()
    assert (cfg.provider, cfg.model, cfg.base_url, cfg.max_calls) == ("ollama", "qwen3:8b",
                                                                       "http://localhost:11434/v1", 7)
    assert cfg.sources["llm.model"] == "env HABITUS_LLM_MODEL" and cfg.sources["llm.max_calls"] == "config"


def test_provider_key_variable_is_used_and_never_described(monkeypatch) -> None:
    monkeypatch.setenv("HABITUS_LLM", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    info = describe()
    assert info["llm"]["api_key"] == "set (env OPENAI_API_KEY)" and info["llm"]["ready"]
    assert "sk-very-secret-value" not in json.dumps(info)
    assert "sk-very" not in repr(get_provider())


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("llm.max_calls", "12", 12),
    ("llm.max_cost", "0.5", 0.5),
    ("llm.cache", "off", False),
    ("llm.provider", "anthropic", "anthropic"),
    ("recall.top_k", "5", 5),
    ("recall.mode", "strict", "strict"),
    ("deliver.enabled", "true", True),
])
def test_set_value_types_values_and_round_trips_through_toml(habitus_home: Path, key, value, expected) -> None:
    assert set_value(key, value) == expected
    data = tomllib.loads((habitus_home / "config.toml").read_text())
    section, name = key.split(".")
    assert data[section][name] == expected


@pytest.mark.parametrize(("key", "value", "match"), [
    ("llm.max_calls", "many", "expects int"),
    ("llm.provider", "gemini", "must be one of"),
    ("llm.cache_ttl", "2h", "5m or 1h"),
    ("noseparator", "x", "section.name"),
])
def test_set_value_rejects_bad_input_and_keeps_the_file(habitus_home: Path, key, value, match) -> None:
    set_value("llm.model", "gpt-4o")
    before = (habitus_home / "config.toml").read_text()
    with pytest.raises(ConfigError, match=match):
        set_value(key, value)
    assert (habitus_home / "config.toml").read_text() == before


def test_toml_writer_escapes_strings_and_nests_tables() -> None:
    data = {"top": 1, "llm": {"model": 'we"ird\\name\n', "list": [1, "a"]}, "a": {"b": {"c": True}}}
    assert tomllib.loads(dumps_toml(data)) == data


def test_broken_config_file_is_a_clear_error(habitus_home: Path) -> None:
    (habitus_home / "config.toml").write_text("[llm\nprovider = ")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_llm_config()
    assert describe()["ok"] is False


def test_cli_set_and_show_mask_the_key(habitus_home: Path) -> None:
    result = run_cli("config", "set", "llm.api_key", "sk-cli-secret", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["value"] == "set"
    shown = run_cli("config", "show", "--json", env={"HABITUS_LLM": "openai"})
    assert shown.returncode == 0, shown.stderr
    info = json.loads(shown.stdout)
    assert info["file"]["llm"]["api_key"] == "set"
    assert info["llm"]["api_key"] == "set (config)"
    human = run_cli("config", "show", env={"HABITUS_LLM": "openai"})
    assert "sk-cli-secret" not in shown.stdout + human.stdout + human.stderr
    assert "api key   set (config)" in human.stdout


def test_cli_set_bad_value_is_one_line_on_stderr_and_exit_1() -> None:
    result = run_cli("config", "set", "llm.max_cost", "cheap")
    assert result.returncode == 1
    assert result.stderr.strip() == "habitus: error: llm.max_cost expects float, got 'cheap'"


def test_cli_try_stops_at_max_calls_and_reports_usage() -> None:
    replies = [Reply(openai_answer(f"answer {i}", prompt=100, completion=10)) for i in range(5)]
    with stub_server(replies) as stub:
        env = {"HABITUS_LLM": "openai", "HABITUS_LLM_BASE_URL": stub.url + "/v1", "HABITUS_LLM_MODEL": "gpt-4o-mini"}
        result = run_cli("config", "try", "hello", "--repeat", "5", "--max-calls", "2", "--json", env=env)
        human = run_cli("config", "try", "hello", "--repeat", "3", "--max-calls", "1", env=env)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["answers"] == ["answer 0", "answer 1"]
    assert out["usage"]["calls"] == 2 and out["usage"]["stopped"] == "max calls reached (2/2)"
    assert out["usage"]["input_tokens"] == 200 and out["usage"]["cost"] > 0
    assert len(stub.requests) == 3  # 2 + 1, never more than the caps
    assert human.stdout.splitlines()[-1].startswith("model: 1 call, 100 in / 10 out tokens, $")
    assert "stopped: max calls reached (1/1)" in human.stdout


def test_cli_try_without_a_model_says_how_to_configure_one() -> None:
    result = run_cli("config", "try", env={"HABITUS_LLM": "none"})
    assert result.returncode == 1 and "no model configured" in result.stderr


def test_cli_prices_shows_the_matched_entry() -> None:
    result = run_cli("config", "prices", "anthropic/claude-sonnet-4.5", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["model"] == "claude-sonnet-4-5"
    assert run_cli("config", "prices", "nope-model").returncode == 1
