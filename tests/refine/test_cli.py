"""`habitus refine` as a user runs it: a real subprocess of the installed CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from habitus.refine.samples import write_corpus

HABITUS = [sys.executable, "-m", "habitus"]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("cli-sample"))


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*HABITUS, "refine", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_json_run_writes_the_four_files_and_prints_one_document(sample, tmp_path):
    out = tmp_path / "out"
    proc = run(str(sample["skill"]), "--traces", str(sample["traces"]), "--rewards", str(sample["rewards"]),
               "--out", str(out), "--no-umap", "--holdout", "0.3", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "proposed_skill.md", "report.html", "skill.diff"]
    assert data["manifest"]["config"]["umap"] is False
    assert data["manifest"]["split"]["held_out"] > 0
    assert data["accepted"] and data["changed"] is True
    assert set(data["stage_seconds"]) >= {"summarize", "embed", "cluster", "propose", "gate", "merge", "holdout"}


def test_human_output_lists_verdicts(sample, tmp_path):
    proc = run(str(sample["skill"]), "--traces", str(sample["traces"]), "--rewards", str(sample["rewards"]),
               "--out", str(tmp_path), "--clusterer", "single")
    assert proc.returncode == 0, proc.stderr
    assert "accepted" in proc.stdout and "wrote proposed_skill.md" in proc.stdout


def test_install_shows_the_diff_then_keeps_the_previous_version(sample, tmp_path):
    skill = tmp_path / "SKILL.md"
    shutil.copy(sample["skill"], skill)
    proc = run(str(skill), "--traces", str(sample["traces"]), "--rewards", str(sample["rewards"]),
               "--out", str(tmp_path / "out"), "--clusterer", "single", "--install")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.index("--- a/SKILL.md") < proc.stdout.index("installed")
    assert (tmp_path / "SKILL.prev-1.md").read_bytes() == sample["skill"].read_bytes()
    assert skill.read_text() == (tmp_path / "out" / "proposed_skill.md").read_text()


@pytest.mark.parametrize(("args", "message"), [
    (["--traces", "nope.jsonl"], "traces not found"),
    (["--traces", "{traces}", "--rewards", "nope.json"], "rewards file not found"),
    (["--traces", "{traces}", "--clusterer", "kmeans", "--rewards", "{rewards}"], "unknown clusterer"),
])
def test_bad_input_is_one_line_on_stderr_and_exit_1(sample, tmp_path, args, message):
    filled = [a.format(traces=sample["traces"], rewards=sample["rewards"]) for a in args]
    proc = run(str(sample["skill"]), *filled, "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("habitus: error:") and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "proposed_skill.md").exists()
