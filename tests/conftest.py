"""Shared test fixtures: an isolated HABITUS_HOME per test and the shared corpus (skipped if absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def habitus_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty habitus home, so nothing touches ~/.habitus."""
    home = tmp_path_factory.mktemp("habitus-home")
    monkeypatch.setenv("HABITUS_HOME", str(home))
    monkeypatch.setenv("HABITUS_LLM", "none")
    return home


@pytest.fixture
def corpus() -> Path:
    """The real public traces in ../shared/corpus; tests that need them skip where it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent beside this checkout (real public traces are not shipped)")
    return CORPUS
