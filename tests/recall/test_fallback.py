"""Fallback ranking when no cue fires: BM25 above a threshold, precision first; same result from store and list."""

from __future__ import annotations

from pathlib import Path

import pytest

from habitus.core.workflow import Workflow
from habitus.recall import recall
from habitus.recall.api import select
from habitus.recall.fallback import fast_tokenize, rank_workflows, workflow_text

from .conftest import git, shortcut_workflow, store_workflows
from .test_cues import ALL, DB, RELEASE


@pytest.mark.parametrize(("task", "picked"), [
    ("timeout when connecting to the database", ["db-timeout"]),  # no cue phrase, but clearly the same job
    ("Write a haiku about autumn leaves", []),
    ("Update the grid colours", []),
    ("Add the new option to the code", []),  # only stop words and generic verbs in common
])
def test_ranking_hands_over_only_above_the_threshold(task: str, picked: list[str]) -> None:
    _, selected = select(task, ALL, "habitus")
    assert [s.workflow.id for s in selected] == picked
    assert all(s.how == "bm25" and 0 < (s.score or 0) <= 1 for s in selected)


def test_only_if_asked_workflow_is_never_handed_over_by_ranking() -> None:
    release_notes = Workflow.from_dict({**RELEASE.to_dict(), "use_when": "cut a release: bump version, changelog"})
    assert rank_workflows("bump the version and write the changelog", [release_notes, DB])  # it would rank
    _, selected = select("bump the version and write the changelog", [release_notes, DB], "habitus")
    assert selected == []


def test_stop_words_and_generic_verbs_do_not_count() -> None:
    assert fast_tokenize("Add the palette export option to the toolbar") == ["palette", "export", "option",
                                                                              "toolbar"]


def test_store_and_list_sources_rank_the_same(shortcut_repo: Path) -> None:
    wf = shortcut_workflow(git(shortcut_repo, "rev-parse", "HEAD"))
    store_workflows(shortcut_repo, [wf, *ALL])
    assert "src/app/keymap.py" in workflow_text(wf)
    task = "list the export binding in the shortcut table and the bindings dict"
    from_store = recall(task, cwd=shortcut_repo, selector="bm25", log=False).to_dict()["selected"]
    from_list = recall(task, cwd=shortcut_repo, selector="bm25", workflows=[wf, *ALL]).to_dict()["selected"]
    assert [s["id"] for s in from_store] == [s["id"] for s in from_list] == ["wf-add-keyboard-shortcut"]
    assert from_store[0]["score"] == from_list[0]["score"]


@pytest.mark.parametrize(("task", "picked"), [
    ("timeout when connecting to the database", ["db-timeout"]),
    ("Write a haiku about autumn leaves", []),
])
def test_embedding_selector_uses_the_configured_embedder(monkeypatch: pytest.MonkeyPatch, task: str,
                                                         picked: list[str]) -> None:
    monkeypatch.setenv("HABITUS_EMBEDDER", "tfidf")
    _, selected = select(task, ALL, "embedding")
    assert [s.workflow.id for s in selected] == picked


def test_fallback_method_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from habitus.recall.fallback import configured_method

    assert configured_method() == "bm25"
    monkeypatch.setenv("HABITUS_RECALL_FALLBACK", "off")
    assert configured_method() == "off"
    assert select("timeout when connecting to the database", ALL, "habitus")[1] == []
