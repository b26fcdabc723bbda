"""`habitus learn` and `habitus workflows …` as a user runs them (subprocess, real store in HABITUS_HOME)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from habitus.bench.fixture import make_fixture_repo


def habitus(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "habitus", *args], capture_output=True, text=True, timeout=120,
                          check=False)


def ok_json(*args: str):
    done = habitus(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def learned_home(tmp_path: Path):
    fx = make_fixture_repo(tmp_path / "fx", seed=1, sessions=6, inspect=False)
    ingest = ok_json("ingest", str(fx.root / "claude"), str(fx.root / "codex"))
    assert ingest["traces"] == len(fx.session_paths)
    return fx


def test_learn_then_list_show_export_archive_restore_import(learned_home, tmp_path):
    fx = learned_home
    report = ok_json("learn", "--repo", str(fx.repo))
    assert report["records_new"] == len(fx.session_paths) and len(report["workflows"]) == 3
    listed = ok_json("workflows", "list", "--repo", str(fx.repo))
    ids = sorted(w["id"] for w in listed)
    assert ids == sorted(w["id"] for w in report["workflows"])

    shown = ok_json("workflows", "show", ids[0][:12])
    assert shown["id"] == ids[0] and shown["format"] == 1 and shown["steps"]

    out = tmp_path / "wf.yaml"
    done = habitus("workflows", "export", "--repo", str(fx.repo), "-o", str(out))
    assert done.returncode == 0 and out.read_text().count("format: 1") == 3
    done = habitus("workflows", "export", ids[1])  # YAML on stdout without -o
    assert done.returncode == 0 and done.stdout.startswith("---\nformat: 1") and ids[1] in done.stdout

    assert ok_json("workflows", "archive", ids[0]) == {"id": ids[0], "status": "archived"}
    assert [w["id"] for w in ok_json("workflows", "list", "--status", "archived")] == [ids[0]]
    assert ids[0] not in [w["id"] for w in ok_json("workflows", "list")]
    # relearning does not bring an archived workflow back
    ok_json("learn")
    assert [w["id"] for w in ok_json("workflows", "list", "--status", "archived")] == [ids[0]]
    assert ok_json("workflows", "restore", ids[0])["status"] == "active"

    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-q",
                    "--allow-empty", "-m", "root"], check=True)
    text = out.read_text().replace(ids[0], "imported-one", 1)
    out.write_text(text)
    imported = ok_json("workflows", "import", str(out), "--repo", str(other))
    assert "imported-one" in imported["imported"]
    assert [w["id"] for w in ok_json("workflows", "list", "--repo", str(other))] == sorted(imported["imported"])


@pytest.mark.parametrize("args", [
    ("workflows", "list", "--status", "deleted"),
    ("workflows", "show", "no-such-workflow"),
    ("workflows", "archive", "no-such-workflow"),
    ("workflows", "import", "/no/such/file.yaml"),
    ("learn", "--repo", "/no/such/repo"),
])
def test_user_errors_are_one_line_on_stderr_and_exit_1(args):
    done = habitus(*args)
    assert done.returncode == 1
    assert done.stderr.startswith("habitus: error:") and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_learn_with_an_empty_store_says_so(tmp_path):
    done = habitus("learn")
    assert done.returncode == 0 and done.stdout.startswith("no traces in the store yet: ingest coding sessions")
