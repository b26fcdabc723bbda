"""The main job end to end: `habitus demo` from the real CLI writes one report that a real browser renders."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("demo")
    out, work = root / "report", root / "work"
    done = subprocess.run([sys.executable, "-m", "habitus", "demo", "--out", str(out), "--work", str(work), "--json"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"result": json.loads(done.stdout), "out": out, "stderr": done.stderr}


def test_demo_prints_one_json_document_and_progress_on_stderr(demo_run: dict) -> None:
    result = demo_run["result"]
    assert Path(result["report"]).name == "index.html"
    assert "[1/11]" in demo_run["stderr"] and "[11/11]" in demo_run["stderr"]
    assert len(result["stages"]) == 11


def test_demo_learns_workflows_and_hands_each_task_the_right_one(demo_run: dict) -> None:
    facts = demo_run["result"]["facts"]
    assert facts["ingest"]["traces"] >= 12 and facts["ingest"]["tool_calls"] > 50
    assert len(facts["workflows"]) >= 3
    by_task = {r["task"]: r for r in facts["recall"]}
    assert by_task["Fix the database connection timeout when the server starts under load."]["picked"] == "nothing"
    assert by_task["Review the keyboard shortcuts described in the docs only, no code changes."]["intent"] == "inspect"
    assert by_task["Toggle the grid from the menu; do not add a keyboard shortcut."]["picked"] == "nothing"
    after_move = [r for r in facts["recall"] if r["task"].startswith("(after ")]
    assert after_move and after_move[0]["moved"] >= 1 and after_move[0]["picked"] != "nothing"


def test_demo_promotes_once_and_not_again(demo_run: dict) -> None:
    promote = demo_run["result"]["facts"]["promote"]
    assert promote["additions"] >= 1 and promote["applied"] is True
    assert promote["proposed_on_second_run"] == 0


def test_demo_report_has_every_section(demo_run: dict) -> None:
    html = (demo_run["out"] / "index.html").read_text(encoding="utf-8")
    for title in ("What was learned", "What each task was handed", "always-on rules block", "Skill refinement",
                  "Context policies", "Expense itemization", "Recall benchmark", "Replay benchmark"):
        assert title in html, title
    assert html.count("data:image/png;base64,") >= 1
    for sub in ("refine/report.html", "context/index.html", "expense/report.html"):
        assert (demo_run["out"] / sub).is_file(), sub


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_demo_report_renders_in_headless_chromium(demo_run: dict, tmp_path: Path) -> None:
    from PIL import Image

    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2400",
                    f"--screenshot={shot}", (demo_run["out"] / "index.html").as_uri()],
                   capture_output=True, timeout=120, check=False)
    assert shot.is_file() and shot.stat().st_size > 10_000
    image = Image.open(shot).convert("L")
    lo, hi = image.getextrema()
    assert hi - lo > 100, "the screenshot is blank: the page did not render"
    # Text rendered: a good share of the page is not background.
    histogram = image.histogram()
    background = max(histogram)
    assert sum(histogram) - background > 0.02 * sum(histogram)


def test_demo_replays_a_generated_real_style_history(demo_run: dict) -> None:
    replay = demo_run["result"]["facts"]["replay"]
    assert replay["history"] > 0 and replay["tasks"] > 0
    habitus, changed = replay["summary"]["habitus"], replay["summary"]["most-changed"]
    assert habitus["f1"] > changed["f1"] and replay["summary"]["none"]["hit"] == 0
    assert (demo_run["out"] / "replay" / "report.html").is_file()


def test_the_terminal_summary_reads_as_sentences_not_data(demo_run: dict) -> None:
    from habitus.cli.demo_cmd import fact_line

    facts = {k: v for k, v in demo_run["result"]["facts"].items() if k != "recall"}
    lines = [fact_line(key, value) for key, value in facts.items()]
    for key, line in zip(facts, lines, strict=True):
        assert not line.startswith(f"{key}: "), line  # every fact of the demo has its own wording
        assert "{" not in line and "'" not in line, line  # no dict or list repr reaches the terminal
    ingest = facts["ingest"]
    assert f"ingested {ingest['traces']} traces" in lines[list(facts).index("ingest")]
    assert fact_line("unknown", {"a": 1}) == "unknown: {'a': 1}"  # a new fact still prints
