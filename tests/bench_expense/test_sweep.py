"""Sweeps, reports, calibration and the `habitus bench expense` command (real subprocess runs)."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from habitus.bench.expense.sweep import calibrate, run_sweep
from habitus.bench.expense.tasks import Difficulty
from habitus.bench.report_html import Section, Table, write_html_report

EXE = str(Path(sys.executable).with_name("habitus"))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("sweep")
    return run_sweep("context-bound", configs=["C1", "C3", "keep-last:2"], tools=["slim", "toolfix"], tasks=4, runs=2,
                     seed=2, out_dir=out, sensitivity=True, sensitivity_tasks=2, sensitivity_runs=1)


def test_sweep_covers_every_cell_with_intervals(sweep) -> None:
    assert [(c["config"], c["variant"]) for c in sweep.cells] == [
        ("C1", "slim"), ("C3", "slim"), ("keep-last:2", "slim"),
        ("C1", "toolfix"), ("C3", "toolfix"), ("keep-last:2", "toolfix")]
    assert len(sweep.episodes) == 6 * 4 * 2
    for cell in sweep.cells:
        assert cell["episodes"] == 8 and cell["runs"] == 2 and len(cell["completion_per_run"]) == 2
        assert cell["completion_wilson"]["n"] == 8 and cell["completion_t"]["n"] == 2
        assert cell["completion"] == pytest.approx(sum(cell["completion_per_run"]) / 2)
        assert cell["agent_input_tokens"] > 0 and cell["cost"] > 0


def test_sweep_pairs_configurations_and_tool_variants_on_the_same_tasks(sweep) -> None:
    pairs = {(p["a"]["config"], p["a"]["variant"], p["b"]["config"], p["b"]["variant"]) for p in sweep.paired}
    assert ("C3", "slim", "C1", "slim") in pairs and ("C1", "toolfix", "C1", "slim") in pairs
    assert all(p["n"] == 4 for p in sweep.paired)


def test_sweep_writes_json_and_a_self_contained_html_report_labelled_scripted(sweep) -> None:
    data = json.loads(sweep.json_path.read_text())
    assert data["meta"]["scripted"] is True and "scripted" in data["meta"]["label"]
    assert len(data["episodes"]) == 48 and data["sensitivity"]["N"] and data["sensitivity"]["W"]
    html = sweep.html_path.read_text()
    assert "Expense-itemization benchmark (scripted agent)" in html
    images = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html)
    assert len(images) == 4  # completion vs tokens, failures, sensitivity N and W
    assert all(base64.b64decode(img).startswith(b"\x89PNG") for img in images)
    assert "http://" not in html and "https://" not in html  # nothing external


def test_sensitivity_covers_n_and_w_per_variant(sweep) -> None:
    ns = [r["value"] for r in sweep.sensitivity["N"] if r["variant"] == "slim"]
    ws = [r["value"] for r in sweep.sensitivity["W"] if r["variant"] == "toolfix"]
    assert ns == [1, 2, 3, 5, 8, 13] and ws == [1, 2, 3, 5, -1]


def test_same_seed_same_results() -> None:
    a = run_sweep("context-bound", configs=["C3"], tools=["slim"], tasks=3, runs=2, seed=9)
    b = run_sweep("context-bound", configs=["C3"], tools=["slim"], tasks=3, runs=2, seed=9)
    strip = [{k: v for k, v in c.items() if k != "wall_s"} for c in a.cells]
    assert strip == [{k: v for k, v in c.items() if k != "wall_s"} for c in b.cells]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"tools": ["fat"]}, "unknown tool variant"), ({"configs": ["keep-last:x"]}, "bad N"),
     ({"agent": "gpt"}, "unknown agent"), ({"runs": 0}, "runs must be")],
)
def test_bad_sweep_arguments_raise_clear_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_sweep(**{"tasks": 1, "runs": 1, **kwargs})


def test_calibration_raises_difficulty_until_the_solver_drops_below_target() -> None:
    cal = calibrate("context-bound", config="keep-last:3", variant="slim", tasks=10, runs=1, target=0.9)
    assert not cal["saturated"] and cal["steps"][-1]["completion"] < 0.9
    assert all(step["completion"] >= 0.9 for step in cal["steps"][:-1])
    assert cal["difficulty"] == Difficulty.level(cal["level"]).to_dict()


def test_calibration_reports_a_saturated_solver() -> None:
    cal = calibrate("oracle", tasks=3, runs=1, max_level=2)
    assert cal["saturated"] and cal["level"] is None and len(cal["steps"]) == 3


def test_report_helper_writes_tables_text_and_png_bytes(tmp_path: Path) -> None:
    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9a"
                           "wAAAABJRU5ErkJggg==")
    path = write_html_report(tmp_path / "r" / "x.html", "T <1>", [
        Section("S", "para one\n\npara <two>", tables=[Table(["a", "b"], [[1, 0.123456]], "cap")], figures=[png])])
    html = path.read_text()
    assert "<title>T &lt;1&gt;</title>" in html and "<p>para &lt;two&gt;</p>" in html
    assert "<td class='num'>0.1235</td>" in html and html.count("data:image/png;base64,") == 1


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, "bench", "expense", *args], capture_output=True, text=True, timeout=180)


def test_cli_json_is_one_document_and_writes_the_report(tmp_path: Path) -> None:
    proc = run_cli("--agent", "oracle", "--tasks", "2", "--runs", "1", "--config", "C2", "--config",
                   "keep-last:5+summary:-1", "--tools", "snapshot", "--out", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [c["policy"] for c in data["cells"]] == ["full", "keep-last:5+summary:-1"]
    assert all(c["completion"] == 1.0 for c in data["cells"])
    assert (tmp_path / "report.html").exists() and data["html"] == str(tmp_path / "report.html")


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--config", "C9"], "unknown context policy"), (["--tools", "fat"], "unknown tool variant"),
     (["--agent", "gpt"], "unknown --agent")],
)
def test_cli_bad_input_is_one_line_and_exit_1(args: list[str], message: str, tmp_path: Path) -> None:
    proc = run_cli(*args, "--tasks", "1", "--runs", "1", "--out", str(tmp_path))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and message in proc.stderr


def test_cli_calibrate(tmp_path: Path) -> None:
    proc = run_cli("--calibrate", "--config", "keep-last:3", "--tasks", "8", "--runs", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    cal = json.loads(proc.stdout)
    assert cal["config"]["policy"] == "keep-last:3" and cal["steps"]
