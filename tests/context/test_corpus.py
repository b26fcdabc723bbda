"""Simulation on real public sessions from ../shared/corpus (skipped where the corpus is absent)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from habitus.context.simulate import simulate_files

ALL_POLICIES = ["full", "keep-last:5", "keep-last:5+summary:3", "keep-last:5+summary:-1", "compact:40000",
                "clear-results:5", "self-edit"]
PRUNING = ["keep-last:5", "keep-last:5+summary:3", "keep-last:5+summary:-1", "clear-results:5"]


def sessions(corpus: Path) -> list[Path]:
    files = sorted(corpus.glob("claude_code/*/*.jsonl")) + sorted(corpus.glob("codex/*/*.jsonl"))
    files += sorted(corpus.glob("skillrefiner/golden/*/*/raw_content.txt"))[:2]
    return files


@pytest.fixture(scope="module")
def reports(request: pytest.FixtureRequest):
    corpus = request.getfixturevalue("corpus")
    return simulate_files(sessions(corpus), ALL_POLICIES)


@pytest.fixture(scope="module")
def corpus() -> Path:  # module scope, same skip rule as tests/conftest.py
    from tests.conftest import CORPUS

    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent beside this checkout (real public traces are not shipped)")
    return CORPUS


def test_simulate_runs_every_policy_on_every_real_session(reports):
    assert len(reports) >= 7  # 5 Claude Code + 1 Codex session with requests, 2 SkillRefiner transcripts
    for report in reports:
        assert [r.policy for r in report.results] == ALL_POLICIES
        for result in report.results:
            assert result.requests == report.requests > 0
            assert result.input_tokens > 0 and result.peak_context > 0
        full = report.result("full")
        assert full.dependency_loss == 0
        assert report.result("self-edit").input_tokens == full.input_tokens  # no edit calls were recorded


def test_simulated_full_history_input_is_within_10pct_of_recorded_usage(reports):
    compared = [r for r in reports if r.recorded is not None and r.recorded.requests_compared]
    assert len(compared) >= 6  # every Claude Code and Codex session records usage
    for report in compared:
        assert abs(report.recorded.error_pct) <= 10.0, (report.trace_id, report.recorded)


def test_simulated_cache_hit_rate_matches_the_recorded_one(reports):
    compared = [r for r in reports if r.recorded is not None and r.recorded.recorded_hit_rate is not None]
    assert len(compared) >= 6
    for report in compared:
        gap = abs(report.recorded.recorded_hit_rate - report.recorded.simulated_hit_rate)
        assert gap <= 0.05, (report.trace_id, report.recorded)


def test_pruning_policies_hit_the_cache_less_than_full_history(reports):
    checked = 0
    for report in reports:
        if report.pairs <= 6:
            continue  # keep-last:5 keeps everything in a session this short
        full = report.result("full")
        for policy in PRUNING:
            assert report.result(policy).cache_hit_rate < full.cache_hit_rate, (report.trace_id, policy)
        checked += 1
    assert checked >= 5


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}  # a wide terminal, so table cells are not wrapped
    return subprocess.run([sys.executable, "-m", "habitus", *args], capture_output=True, text=True, timeout=120,
                          env=env)


def test_cli_simulate_prints_one_json_document_and_writes_the_report(corpus, tmp_path):
    session = next(iter(sorted(corpus.glob("codex/AcidicSoil*/*.jsonl"))))
    out = tmp_path / "report"
    proc = run_cli("context", "simulate", str(session), "--policy", "full", "--policy", "keep-last:3+summary:-1",
                   "--model", "gpt-5", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    [report] = data["reports"]
    assert [r["policy"] for r in report["results"]] == ["full", "keep-last:3+summary:-1"]
    assert report["cache"]["mode"] == "automatic" and report["model"] == "gpt-5"
    assert report["results"][0]["cost"] > 0
    assert (out / "context.png").stat().st_size > 1000
    assert "keep-last:3+summary:-1" in (out / "index.html").read_text()
    assert json.loads((out / "report.json").read_text())[0]["trace_id"] == report["trace_id"]


def test_cli_human_output_shows_the_table_and_recorded_comparison(corpus):
    session = next(iter(sorted(corpus.glob("claude_code/entireio_cli/*.jsonl"))))
    proc = run_cli("context", "simulate", str(session), "-p", "full", "-p", "clear-results:2")
    assert proc.returncode == 0, proc.stderr
    assert "clear-results:2" in proc.stdout and "recorded vs simulated" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "keep-last:x"], "bad N"),
        (["--cache-ttl", "2h"], "--cache-ttl"),
        (["--summarizer", "magic"], "--summarizer"),
    ],
)
def test_cli_bad_input_is_one_line_on_stderr_and_exit_1(corpus, args, message):
    session = next(iter(sorted(corpus.glob("codex/AcidicSoil*/*.jsonl"))))
    proc = run_cli("context", "simulate", str(session), *args)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr


def test_cli_missing_file_is_a_user_error(tmp_path):
    proc = run_cli("context", "simulate", str(tmp_path / "missing.jsonl"), "--json")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "no such session file" in proc.stderr
