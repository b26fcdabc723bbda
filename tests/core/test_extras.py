"""The core install without the extras: what still works, and the one line that names a missing extra.

The extras' libraries are hidden from a subprocess by a `sitecustomize` that refuses to import them,
so these tests see what a `pip install habitus` without extras sees, in the same environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from habitus.core.extras import EXTRAS, MissingExtra, has_extra, missing_modules, require_extra

HIDDEN = sorted({name for names in EXTRAS.values() for name in names})
BLOCKER = f'''
import sys
from importlib.abc import MetaPathFinder

class HideExtras(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HIDDEN!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden by the test)")
        return None

sys.meta_path.insert(0, HideExtras())
'''


@pytest.fixture()
def without_extras(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), src]), "HABITUS_HOME": str(tmp_path / "h")}


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120, check=False)


def test_the_core_imports_without_any_extra(without_extras: dict[str, str]) -> None:
    code = ("import importlib; from habitus.core.extras import has_extra; assert not has_extra('refine'); "
            "mods = ['habitus.cli.main', 'habitus.learn', 'habitus.recall', 'habitus.deliver.hook', "
            "'habitus.bench.replay.runner', 'habitus.bench.replay.report', 'habitus.bench.demo', "
            "'habitus.bench.stats', 'habitus.index.embedders', 'habitus.refine.pipeline']; "
            "[importlib.import_module(m) for m in mods]; "
            "from habitus.index.embedders import TfidfEmbedder; "
            "e = TfidfEmbedder(lsa_dims=2).fit(['add a shortcut', 'fix the parser', 'add an endpoint']); "
            "v = e.embed(['x add']); "
            "from habitus.bench.stats import mean_t_interval; i = mean_t_interval([1.0, 2.0, 4.0]); "
            "print(v.shape, round(i.high, 3))")
    done = run(without_extras, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(1,", "2)", "6.128"]  # 7/3 + t(0.975, 2) 4.303 * sd 1.528 / sqrt(3)


@pytest.mark.parametrize("argv", [
    ["refine", "SKILL.md", "--traces", "t.jsonl"],
    ["demo", "--refine", "--out", "r", "--work", "w"],
])
def test_a_missing_extra_is_one_line_naming_it(without_extras: dict[str, str], tmp_path: Path,
                                                argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "habitus", *argv], capture_output=True, text=True,
                          env=without_extras, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "needs the 'refine' extra" in lines[0] and "pip install 'habitus[refine]'" in lines[0]
    assert not (tmp_path / "r").exists()  # refused before any work


def test_a_report_without_matplotlib_says_which_figures_it_left_out(without_extras: dict[str, str],
                                                                    tmp_path: Path) -> None:
    code = ("from habitus.bench.report_html import Section, write_html_report; import sys; "
            "write_html_report(sys.argv[1], 't', [Section('s', figures=[lambda: 1 / 0, lambda: 1 / 0])])")
    done = run(without_extras, "-c", code, str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr  # the figure functions were never called
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "2 figures are left out: matplotlib is not installed" in page and "habitus[plots]" in page


def test_a_bare_folder_named_like_a_library_is_not_the_library(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "no_such_library_xyz").mkdir()  # e.g. Ray's /tmp/ray when a command runs from /tmp
    monkeypatch.syspath_prepend(str(tmp_path))
    EXTRAS["test-only"] = ("no_such_library_xyz",)
    try:
        assert missing_modules("test-only") == ["no_such_library_xyz"]
    finally:
        del EXTRAS["test-only"]


def test_require_extra_in_process() -> None:
    assert missing_modules("plots") == [] if has_extra("plots") else missing_modules("plots") == ["matplotlib"]
    EXTRAS["test-only"] = ("habitus", "no_such_module_xyz")
    try:
        with pytest.raises(MissingExtra, match=r"^frobbing needs the 'test-only' extra \(no_such_module_xyz not "):
            require_extra("test-only", "frobbing")
    finally:
        del EXTRAS["test-only"]


def test_doctor_says_which_extras_are_installed(without_extras: dict[str, str], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "habitus", "doctor", "--json"], capture_output=True, text=True,
                          env=without_extras, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    extras = json.loads(done.stdout)["extras"]
    assert set(extras) == set(EXTRAS) and extras["refine"] is False and extras["plots"] is False
    text = subprocess.run([sys.executable, "-m", "habitus", "doctor"], capture_output=True, text=True,
                          env=without_extras, cwd=tmp_path, timeout=120, check=False).stdout
    assert "not installed: " in text and "refine" in text.split("not installed: ", 1)[1]
