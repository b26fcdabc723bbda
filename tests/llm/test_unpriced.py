"""Usage of a model without a price is reported as unpriced (with its requests) wherever cost is computed:
per trace and in totals (`traces stats`), in the model ledger, in the context simulator; and
`habitus config set pricing.<model>` gives it a price."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from habitus.capture.stats import total_stats, trace_stats
from habitus.cli.main import app
from habitus.core import Step, StepKind, Trace, Usage
from habitus.llm.budget import UsageLedger
from habitus.llm.pricing import get_price, price_trace


def _trace(model: str, steps: list[tuple[str | None, Usage]]) -> Trace:
    trace = Trace(id="t1", source_format="claude", agent="claude-code", model=model)
    for step_model, usage in steps:
        trace.steps.append(Step(kind=StepKind.ASSISTANT, text="x", usage=usage,
                                meta={"model": step_model} if step_model else {}))
        trace.usage.add(usage)
    return trace


MILLION_IN = Usage(input_tokens=1_000_000)


def test_each_request_is_priced_on_its_own_model_and_unknown_models_are_counted_not_guessed() -> None:
    trace = _trace("claude-opus-4-6", [(None, MILLION_IN), (None, MILLION_IN),
                                       ("claude-haiku-4-5-20251001", MILLION_IN), ("claude-opus-4-9", MILLION_IN)])
    priced = price_trace(trace).to_dict()
    assert priced["cost"] == pytest.approx(5 + 5 + 1)  # two Opus 4.6 requests at $5, one Haiku 4.5 at $1
    assert priced["priced_requests"] == 3
    assert priced["unpriced"] == {"claude-opus-4-9": {"requests": 1, "tokens": 1_000_000}}
    assert priced["by_model"]["claude-opus-4-6"] == {"requests": 2, "tokens": 2_000_000, "cost": 10.0}


def test_codex_totals_beyond_the_steps_are_priced_on_the_trace_model() -> None:
    trace = _trace("gpt-5.3-codex", [(None, Usage(input_tokens=1_000_000))])
    trace.usage = Usage(input_tokens=3_000_000)  # a cumulative token_count total: two requests had no step usage
    assert price_trace(trace).cost == pytest.approx(3 * 1.75)


def test_copilot_usage_by_model_and_a_recorded_aider_cost_are_used_as_given() -> None:
    copilot = Trace(id="c", source_format="copilot", agent="copilot-cli", model="claude-opus-4.8",
                    meta={"usage_by_model": {
                        "claude-opus-4.8": {"input_tokens": 1_000_000, "output_tokens": 0, "requests": 3},
                        "gpt-5.3-codex-spark": {"input_tokens": 10, "output_tokens": 5, "requests": 2}}})
    priced = price_trace(copilot).to_dict()
    assert priced["cost"] == pytest.approx(5.0)
    assert priced["unpriced"] == {"gpt-5.3-codex-spark": {"requests": 2, "tokens": 15}}
    aider = _trace("openrouter/some/unknown", [(None, Usage(input_tokens=2400, output_tokens=104, cost=0.00042))])
    assert price_trace(aider).cost == pytest.approx(0.00042) and not price_trace(aider).unpriced_requests


def test_trace_stats_and_totals_show_cost_and_unpriced_requests() -> None:
    known = _trace("claude-sonnet-4-6", [(None, MILLION_IN)])
    unknown = _trace("my-finetune", [(None, MILLION_IN), (None, MILLION_IN)])
    stats = [trace_stats(known), trace_stats(unknown)]
    assert stats[0]["cost"] == pytest.approx(3.0) and stats[0]["unpriced"] == {}
    assert stats[1]["cost"] is None and stats[1]["unpriced"] == {"my-finetune": {"requests": 2, "tokens": 2_000_000}}
    total = total_stats(stats)
    assert total["cost"] == pytest.approx(3.0)
    assert total["unpriced"] == {"my-finetune": {"requests": 2, "tokens": 2_000_000}}


def test_the_ledger_names_the_unpriced_models() -> None:
    ledger = UsageLedger()
    ledger.record(Usage(input_tokens=10), None, "my-local-thing")
    ledger.record(Usage(input_tokens=10), None, "my-local-thing")
    ledger.record(Usage(input_tokens=10), 0.5, "gpt-4o")
    assert ledger.to_dict()["unpriced_models"] == {"my-local-thing": 2}
    assert ledger.summary().endswith("$0.5000 (+2 unpriced: my-local-thing x2)")


def test_the_simulator_says_how_many_requests_have_no_price() -> None:
    from habitus.context.simulate import simulate

    trace = Trace(id="s", source_format="chat", agent="t", model="no-such-model-xyz", steps=[
        Step(kind=StepKind.USER, text="hi"), Step(kind=StepKind.ASSISTANT, text="hello"),
        Step(kind=StepKind.USER, text="again"), Step(kind=StepKind.ASSISTANT, text="hello again")])
    report = simulate(trace, ["full"])
    note = next(n for n in report.notes if "no price" in n)
    assert f"its {report.requests} requests are unpriced" in note and report.requests == 2
    assert "habitus config set pricing.no-such-model-xyz" in note


def test_config_set_pricing_prices_a_model_then_unset_makes_it_unpriced_again(habitus_home: Path) -> None:
    runner = CliRunner()
    assert get_price("claude-4.5-opus-high-thinking") is None
    done = runner.invoke(app, ["config", "set", "pricing.claude-4.5-opus-high-thinking", "claude-opus-4-5", "--json"])
    assert done.exit_code == 0, done.output
    assert get_price("claude-4.5-opus-high-thinking").input == 5.0
    done = runner.invoke(app, ["config", "set", "pricing.my-model.v2", "input=0.4 output=1.6 cached_input=0.1"])
    assert done.exit_code == 0, done.output
    price = get_price("my-model.v2")
    assert (price.input, price.cached_input, price.cache_write, price.output) == (0.4, 0.1, 0.4, 1.6)
    assert price.taken == "config"
    override = runner.invoke(app, ["config", "set", "pricing.gpt-4o", "input=1 output=2"])
    assert override.exit_code == 0 and get_price("gpt-4o-2024-08-06").input == 1.0  # the user's price wins
    assert '[pricing."my-model.v2"]' in (habitus_home / "config.toml").read_text()
    shown = json.loads(runner.invoke(app, ["config", "prices", "my-model.v2", "--json"]).stdout)
    assert shown[0]["model"] == "my-model.v2" and shown[0]["source"].endswith("config.toml")
    done = runner.invoke(app, ["config", "unset", "pricing.my-model.v2"])
    assert done.exit_code == 0 and get_price("my-model.v2") is None
    unknown = runner.invoke(app, ["config", "prices", "my-model.v2"])
    assert unknown.exit_code == 1 and "habitus config set pricing.my-model.v2" in unknown.stderr


@pytest.mark.parametrize(("value", "message"), [
    ("input=abc output=1", "must be USD per million tokens"),
    ("input=1", "give at least input"),
    ("inptu=1 output=2", "unknown field 'inptu'"),
    ("input=-1 output=2", "cannot be negative"),
    ("no-such-model", "neither prices"),
])
def test_a_bad_price_is_a_one_line_error_and_changes_nothing(habitus_home: Path, value: str, message: str) -> None:
    done = CliRunner().invoke(app, ["config", "set", "pricing.x", value])
    assert done.exit_code == 1 and message in done.stderr and done.stderr.count("\n") == 1
    assert not (habitus_home / "config.toml").exists()


def test_traces_stats_prints_unpriced_requests_end_to_end(tmp_path: Path, habitus_home: Path) -> None:
    base = {"sessionId": "future-model", "cwd": "/work/repo", "timestamp": "2026-12-01T00:00:00Z", "version": "2.1.90"}
    lines = [{**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "do it"}},
             {**base, "type": "assistant", "uuid": "u2", "message": {
                 "id": "msg_1", "role": "assistant", "model": "claude-opus-4-9",
                 "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 1000, "output_tokens": 10}}}]
    (tmp_path / "future-model.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = {**os.environ, "HABITUS_HOME": str(habitus_home)}
    ingest = subprocess.run([sys.executable, "-m", "habitus", "ingest", str(tmp_path), "-q"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert ingest.returncode == 0, ingest.stderr
    text = CliRunner().invoke(app, ["traces", "stats", "future-model"]).stdout
    assert "cost: - + unpriced: claude-opus-4-9 (1 request)" in text
    CliRunner().invoke(app, ["config", "set", "pricing.claude-opus-4-9", "input=5 output=25"])
    data = json.loads(CliRunner().invoke(app, ["traces", "stats", "future-model", "--json"]).stdout)
    assert data["cost"] == pytest.approx((1000 * 5 + 10 * 25) / 1e6) and data["unpriced"] == {}
