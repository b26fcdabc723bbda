"""The MiniLM embedding fallback's threshold: a paraphrase of a workflow's job clears it, an unrelated task does not.

Pins behaviour, not the calibrated number (benchmarks/calibrate_embedding_threshold.py sets that).
Runs the real all-MiniLM-L6-v2 model; skipped only where sentence-transformers is not installed.
"""

from __future__ import annotations

import importlib.util

import pytest

from habitus.core.workflow import Workflow
from habitus.recall.api import select
from habitus.recall.fallback import EMBEDDING_THRESHOLD, EMBEDDING_THRESHOLDS, fast_tokenize, rank_texts, workflow_text

from .conftest import shortcut_workflow

pytestmark = pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                                reason="sentence-transformers is not installed (pip install 'habitus[semantic]'); "
                                       "the minilm embedder needs it")

ENDPOINT = Workflow.from_dict({
    "format": 1, "id": "wf-add-api-endpoint", "name": "Add an API endpoint",
    "use_when": "a task adds an HTTP route to the server API", "intent": "change", "only_if_asked": False,
    "cues": {"any": ["api endpoint"], "none": [], "steps": []},
    "steps": [{"do": "Add the handler {handler} for {path} to ROUTES", "place": {"file": "server/api.py", "chain": []}},
              {"do": "Document {path} in the API reference", "place": {"file": "docs/api.md", "chain": []}},
              {"do": "Test that {path} returns 200", "place": {"file": "tests/test_api.py", "chain": []}}],
})
WORKFLOWS = [shortcut_workflow(None), ENDPOINT]


@pytest.fixture(autouse=True)
def _minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HABITUS_EMBEDDER", "minilm")


@pytest.mark.parametrize(("task", "picked"), [
    # paraphrases: none of the workflow's cue phrases occur, the job is the same
    ("Bind Alt+L to the lockLayer command so it can be triggered from the keyboard", "wf-add-keyboard-shortcut"),
    ("Make the lock-layer action reachable with a key combo", "wf-add-keyboard-shortcut"),
    ("Expose a new HTTP route on the server that lists the fonts", "wf-add-api-endpoint"),
])
def test_paraphrase_of_a_workflows_job_clears_the_threshold(task: str, picked: str) -> None:
    _, selected = select(task, WORKFLOWS, "embedding")
    assert [s.workflow.id for s in selected][:1] == [picked]
    assert selected[0].how == "embedding" and selected[0].score is not None


@pytest.mark.parametrize("task", [
    "Translate the error messages of the upload form into German",
    "Write a haiku about autumn leaves",
    "Bump the version in package.json to 0.4.0 and tag the release.",
    "Speed up the thumbnail renderer; it redraws every layer on each frame.",
])
def test_unrelated_task_stays_below_the_threshold(task: str) -> None:
    _, selected = select(task, WORKFLOWS, "embedding")
    assert selected == []


def test_store_token_documents_rank_a_paraphrase_too() -> None:
    """The store hands ranking stop-word-free tokens, not the text: the paraphrase must still clear the bar."""
    docs = [(wf.id, fast_tokenize(workflow_text(wf))) for wf in WORKFLOWS]
    ranked = rank_texts("Bind Alt+L to the lockLayer command so it can be triggered from the keyboard", docs,
                        method="embedding")
    assert [key for key, _ in ranked][:1] == ["wf-add-keyboard-shortcut"]
    assert rank_texts("Write a haiku about autumn leaves", docs, method="embedding") == []


def test_uncalibrated_embedder_is_held_to_a_stricter_bar_than_minilm() -> None:
    assert EMBEDDING_THRESHOLDS["minilm"] <= EMBEDDING_THRESHOLD
