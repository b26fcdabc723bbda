"""The main job end to end: `habitus demo` from the real CLI writes one report that a real browser renders."""

from __future__ import annotations

import html as html_lib
import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FIRST_SCREEN = (1280, 800)  # a laptop browser's viewport


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`habitus demo` as a person runs it: stderr on a terminal (a pty), stdout read through a pipe."""
    root = tmp_path_factory.mktemp("demo")
    out, work = root / "report", root / "work"
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "habitus", "demo", "--out", str(out), "--work", str(work)],
                            stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    stdout, _ = proc.communicate(timeout=600)
    terminal = _read_all(master)
    os.close(master)
    assert proc.returncode == 0, terminal[-3000:]
    result = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    return {"result": result, "out": out, "stderr": terminal, "stdout": stdout}


def test_demo_shows_each_stage_on_a_terminal_and_plain_lines_in_a_pipe(demo_run: dict) -> None:
    from habitus.bench.demo import stage_names

    result, terminal = demo_run["result"], demo_run["stderr"]
    names = stage_names()
    assert Path(result["report"]).name == "index.html" and list(result["stages"]) == names
    for i, name in enumerate(names, 1):
        assert f"[{i}/{len(names)}] {name}" in terminal
    assert terminal.count("done in") == len(names)
    out = demo_run["stdout"]
    assert re.search(r"ingested \d+ transcripts .* \d+ secrets redacted\n", out)  # never wrapped mid-phrase
    assert out.rstrip().endswith(f"Report: {result['report']}")


def test_progress_is_silent_under_json_and_in_a_pipe(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from habitus.cli.demo_cmd import progress_printer

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    progress_printer(as_json=True)("[1/10] json")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    progress_printer(as_json=False)("[1/10] pipe")
    assert "[1/10]" not in capsys.readouterr().err


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


def test_demo_report_opens_with_the_summary_then_the_product_then_research(demo_run: dict) -> None:
    html = (demo_run["out"] / "index.html").read_text(encoding="utf-8")
    order = ["<h2 id='summary'>Summary</h2>", "What was learned", "What each task was handed",
             "always-on rules block", "Replay benchmark", "<h2 id='research'>Research</h2>"]
    positions = [html.index(title) for title in order]
    assert positions == sorted(positions), order
    summary = html[positions[0]:html.index("</section>", positions[0])]
    facts = demo_run["result"]["facts"]
    for name in facts["workflows"]:
        assert name in summary
    assert f"{facts['sessions']} agent sessions" in summary
    ingest = html[html.index("1. Ingest"):]
    assert f"{facts['sessions']} sessions ({facts['ingest']['traces']} transcripts: 1 session ran a subagent" in ingest
    assert facts["replay"]["verdict"] in summary and "Replay verdict" in summary
    assert summary.count("<tr>") == len(facts["recall"]) + 1  # every new task, with what it was handed
    shown = html_lib.unescape(re.sub(r"<[^>]+>", "", summary))
    assert facts["promote"]["rules"]
    for rule in facts["promote"]["rules"]:
        assert rule.replace("`", "")[:40] in shown, rule
    research = (demo_run["out"] / "research.html").read_text(encoding="utf-8")
    for title in ("Context policies", "Expense itemization", "Recall benchmark", "Skill refinement"):
        assert title in research and title not in html[:positions[-1]], title
    assert "habitus demo --refine" in research  # not run by default: it says how to run it
    for sub in ("context/index.html", "expense/report.html", "recall-bench/report.html", "replay/report.html"):
        assert (demo_run["out"] / sub).is_file(), sub


def test_demo_pages_show_no_raw_markdown_reprs_or_words_cut(demo_run: dict) -> None:
    for page in ("index.html", "research.html"):
        html = (demo_run["out"] / page).read_text(encoding="utf-8")
        text = re.sub(r"<pre>.*?</pre>", "", html, flags=re.S)  # hand-overs are shown exactly as agents get them
        assert not re.search(r"\{'\w+': ", html), page  # no Python dict repr
        assert "**" not in text and "|---" not in text, page  # Markdown rendered, no pipe table as text
        assert not re.search(r"<pre>\|", html), page
        for cell in re.findall(r"<td>([^<]*…)</td>", text):  # shortened at a word boundary
            assert cell.endswith(" …"), cell


def _chromium(url: str, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={profile}", f"--window-size={FIRST_SCREEN[0]},{FIRST_SCREEN[1]}", *args,
                           url], capture_output=True, timeout=120, check=False)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_demo_report_renders_in_headless_chromium(demo_run: dict, tmp_path: Path) -> None:
    from PIL import Image

    shot = tmp_path / "report.png"
    _chromium((demo_run["out"] / "index.html").as_uri(), tmp_path / "profile", f"--screenshot={shot}")
    assert shot.is_file() and shot.stat().st_size > 10_000
    image = Image.open(shot).convert("L")
    lo, hi = image.getextrema()
    assert hi - lo > 100, "the screenshot is blank: the page did not render"
    # Text rendered: a good share of the page is not background.
    histogram = image.histogram()
    background = max(histogram)
    assert sum(histogram) - background > 0.02 * sum(histogram)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_the_whole_summary_is_on_the_first_screen(demo_run: dict, tmp_path: Path) -> None:
    """Laid out by a real browser 1280 pixels wide: the summary's last line ends within the first 800."""
    probe = tmp_path / "probe.html"  # a copy of the page with a script that writes where the summary ends
    html = (demo_run["out"] / "index.html").read_text(encoding="utf-8")
    script = ("<script>window.addEventListener('load', () => { const s = document.getElementById('summary')"
              ".parentElement.getBoundingClientRect(); document.body.setAttribute('data-summary-bottom', "
              "Math.ceil(s.bottom)); document.body.setAttribute('data-width', window.innerWidth); });</script>")
    probe.write_text(html.replace("</body>", script + "</body>"), encoding="utf-8")
    done = _chromium(probe.as_uri(), tmp_path / "profile", "--dump-dom", "--virtual-time-budget=3000")
    dom = done.stdout.decode("utf-8", "replace")
    bottom = re.search(r'data-summary-bottom="(\d+)"', dom)
    width = re.search(r'data-width="(\d+)"', dom)
    assert bottom and width, done.stderr.decode()[-2000:]
    assert int(width.group(1)) == FIRST_SCREEN[0]
    assert 300 < int(bottom.group(1)) <= FIRST_SCREEN[1], bottom.group(1)


def test_demo_replays_a_generated_real_style_history(demo_run: dict) -> None:
    replay = demo_run["result"]["facts"]["replay"]
    assert replay["history"] > 0 and replay["tasks"] > 0
    habitus, changed = replay["summary"]["habitus"], replay["summary"]["most-changed"]
    assert habitus["f1"] > changed["f1"] and replay["summary"]["none"]["hit"] == 0
    assert (demo_run["out"] / "replay" / "report.html").is_file()
    assert replay["advice"] == "use" and replay["verdict"].endswith(": use the hand-overs on this repository.")


def test_the_terminal_summary_reads_as_sentences_not_data(demo_run: dict) -> None:
    from habitus.cli.demo_cmd import fact_line

    facts = {k: v for k, v in demo_run["result"]["facts"].items() if k != "recall"}
    lines = [fact_line(key, value) for key, value in facts.items()]
    for key, line in zip(facts, lines, strict=True):
        assert not line.startswith(f"{key}: "), line  # every fact of the demo has its own wording
        assert "{" not in line and "'" not in line, line  # no dict or list repr reaches the terminal
    ingest = facts["ingest"]
    assert f"ingested {ingest['traces']} transcripts" in lines[list(facts).index("ingest")]
    assert fact_line("unknown", {"a": 1}) == "unknown: {'a': 1}"  # a new fact still prints
