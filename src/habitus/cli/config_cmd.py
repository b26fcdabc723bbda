"""CLI: `habitus config show|set|unset|prices|try`, plus the budget options other model-using commands share.

Keys are never printed: `show` says whether and where a key is set. Other commands that call a
model reuse `MaxCallsOption`, `MaxCostOption` and `print_usage` from here, so every such command
takes the same `--max-calls/--max-cost` and ends with the same usage line (or `usage` in `--json`).
"""

from __future__ import annotations

from typing import Any

import typer

from habitus.cli.output import JsonOption, emit, fail

MaxCallsOption = typer.Option(None, "--max-calls", min=0, help="Stop calling the model after this many calls.")
MaxCostOption = typer.Option(None, "--max-cost", min=0.0, help="Stop calling the model once this many USD are spent.")


def print_usage(ledger: Any) -> None:
    """The closing usage line of a command that called a model (human output only)."""
    typer.echo(ledger.summary())


def register(app: typer.Typer) -> None:
    """Add `habitus config ...` to the root app."""
    config_app = typer.Typer(help="Show and change configuration (model provider, budgets, embedder).",
                             no_args_is_help=True)
    app.add_typer(config_app, name="config")

    @config_app.command("show")
    def show(as_json: bool = JsonOption) -> None:
        """Show the resolved model and embedder settings and the config file (keys masked)."""
        from habitus.llm.config import SECRET_KEYS, ConfigError, describe, load_config, mask

        info = describe()
        try:
            raw = load_config()
        except ConfigError as exc:
            fail(str(exc))
        info["file"] = _masked(raw, SECRET_KEYS, mask)
        emit(info, as_json, _render_show)

    @config_app.command("set")
    def set_(key: str = typer.Argument(..., help="Dotted key, e.g. llm.provider."),
             value: str = typer.Argument(..., help="Value (typed for known keys)."),
             as_json: bool = JsonOption) -> None:
        """Set one key in $HABITUS_HOME/config.toml (`pricing.<model>`: that model's price, see `config prices`)."""
        from habitus.llm.config import KNOWN_KEYS, SECRET_KEYS, ConfigError, config_path, mask, set_value

        if key.startswith("pricing."):
            _set_price(key.removeprefix("pricing."), value, as_json)
            return
        try:
            stored = set_value(key, value)
        except ConfigError as exc:
            fail(str(exc))
        shown = mask(stored) if key in SECRET_KEYS else stored
        result = {"key": key, "value": shown, "file": str(config_path()), "known": key in KNOWN_KEYS}
        emit(result, as_json, lambda r: typer.echo(f"{r['key']} = {r['value']!r}  ({r['file']})"))

    @config_app.command("unset")
    def unset(key: str = typer.Argument(..., help="Dotted key to remove."), as_json: bool = JsonOption) -> None:
        """Remove one key from $HABITUS_HOME/config.toml."""
        from habitus.llm.config import ConfigError, config_path, set_value

        if key.startswith("pricing."):
            _set_price(key.removeprefix("pricing."), None, as_json)
            return
        try:
            set_value(key, None)
        except ConfigError as exc:
            fail(str(exc))
        emit({"key": key, "removed": True, "file": str(config_path())}, as_json,
             lambda r: typer.echo(f"removed {r['key']}"))

    @config_app.command("prices")
    def prices(model: str = typer.Argument(None, help="Show the price matched for this model name."),
               as_json: bool = JsonOption) -> None:
        """Show the pricing table (USD per million tokens) or the entry a model name matches."""
        from habitus.llm.pricing import all_prices, get_price

        if model:
            price = get_price(model)
            if price is None:
                fail(f"no price known for {model!r}; set one with `habitus config set pricing.{model} "
                     "'input=… output=… [cached_input=…] [cache_write=…]'` (USD per million tokens)")
            rows = [price.to_dict()]
        else:
            rows = [p.to_dict() for p in all_prices()]
        emit(rows, as_json, _render_prices)

    @config_app.command("try")
    def try_model(prompt: str = typer.Argument("Say OK.", help="Prompt to send."),
                  repeat: int = typer.Option(1, "--repeat", min=1, help="Send it this many times (no cache)."),
                  max_calls: int = MaxCallsOption, max_cost: float = MaxCostOption,
                  as_json: bool = JsonOption) -> None:
        """Send a prompt to the configured model and print the answer and what it cost."""
        from habitus.llm.providers import Budget, BudgetExceeded, LLMError, NoModelConfigured, get_provider

        budget = Budget.from_config(max_calls, max_cost)
        try:
            provider = get_provider(budget=budget, cache=False)
        except LLMError as exc:
            fail(str(exc))
        answers: list[str] = []
        for _ in range(repeat):
            try:
                answers.append(provider.chat([{"role": "user", "content": prompt}]).text)
            except BudgetExceeded:
                break  # the ledger says why; what was answered is kept
            except NoModelConfigured as exc:
                fail(str(exc))
            except LLMError as exc:
                fail(str(exc))
        result = {"provider": provider.name, "model": provider.model, "answers": answers,
                  "usage": budget.ledger.to_dict()}

        def render(r: dict[str, Any]) -> None:
            for text in r["answers"]:
                typer.echo(text)
            print_usage(budget.ledger)

        emit(result, as_json, render)


def _set_price(model: str, value: str | None, as_json: bool) -> None:
    """`config set|unset pricing.<model>`: the model name may hold dots, so it is not a dotted config key."""
    from habitus.llm.config import ConfigError, config_path
    from habitus.llm.pricing import get_price, set_price

    try:
        entry = set_price(model, value)
    except (ValueError, ConfigError) as exc:
        fail(str(exc))
    price = get_price(model)
    result = {"key": f"pricing.{model}", "value": entry, "removed": value is None, "file": str(config_path()),
              "price": price.to_dict() if price else None}

    def render(r: dict[str, Any]) -> None:
        if r["removed"]:
            left = f"; now priced from {r['price']['source'] or 'the table'}" if r["price"] else "; now unpriced"
            typer.echo(f"removed {r['key']}{left}")
        else:
            p = r["price"]
            typer.echo(f"{r['key']}: input {p['input']}, cached input {p['cached_input']}, cache write "
                       f"{p['cache_write']}, output {p['output']} USD per million tokens  ({r['file']})")

    emit(result, as_json, render)


def _masked(data: dict[str, Any], secrets: frozenset[str], mask: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out[key] = _masked(value, secrets, mask, dotted + ".")
        elif dotted in secrets or key.endswith("api_key") or key.endswith("token"):
            out[key] = mask(value)
        else:
            out[key] = value
    return out


def _render_show(info: dict[str, Any]) -> None:
    if not info.get("ok", True):
        typer.echo(f"config error: {info['error']}")
        return
    llm, embed = info["llm"], info["embed"]
    state = "ready" if llm["ready"] else ("off" if llm["provider"] == "none" else "not ready")
    lines = [
        f"config file   {info['config_file']}{'' if info['config_file_exists'] else ' (absent)'}",
        f"llm provider  {llm['provider']} ({state})",
        f"llm model     {llm['model'] or '-'}",
        f"llm base_url  {llm['base_url'] or '-'}",
        f"llm api key   {llm['api_key']}",
        f"budget        max_calls={llm['max_calls']} max_cost=${llm['max_cost']}",
        f"llm cache     {'on' if llm['cache'] else 'off'}",
        f"embedder      {embed['embedder']} (minilm installed: {'yes' if embed['minilm_installed'] else 'no'})",
    ]
    if llm["sources"]:
        lines.append("from          " + ", ".join(f"{k}: {v}" for k, v in sorted(llm["sources"].items())))
    for line in lines:
        typer.echo(line)


def _render_prices(rows: list[dict[str, Any]]) -> None:
    typer.echo(f"{'model':24} {'provider':9} {'input':>7} {'cached':>7} {'write':>7} {'write1h':>7} "
               f"{'output':>7}  taken")
    for r in rows:
        w1h = "-" if r["cache_write_1h"] is None else f"{r['cache_write_1h']:.3g}"
        typer.echo(f"{r['model']:24} {r['provider']:9} {r['input']:>7.3g} {r['cached_input']:>7.3g} "
                   f"{r['cache_write']:>7.3g} {w1h:>7} {r['output']:>7.3g}  {r['taken']}")
