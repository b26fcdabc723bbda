"""BM25 ranking and the code-aware tokenizer."""

from __future__ import annotations

import subprocess
import sys

import pytest

from habitus.index.bm25 import BM25Index
from habitus.index.tokenize import tokenize


@pytest.mark.parametrize(("text", "expected"), [
    ("Run the Tests", ["run", "the", "tests"]),
    ("getUserName", ["getusername", "get", "user", "name"]),
    ("MAX_RETRY_COUNT", ["max_retry_count", "max", "retry", "count"]),
    ("src/http_server.py", ["src", "http_server", "http", "server", "py"]),
    ("HTTPServer", ["httpserver", "http", "server"]),
    ("sha256Sum v2", ["sha256sum", "sha256", "sum", "v2"]),
    ("__init__", ["init"]),
    ("", []),
    ("— ¿? !!", []),
])
def test_tokenize_lowercases_and_splits_identifiers(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


DOCS = [
    "run the unit tests with pytest -q",
    "build the documentation with sphinx and make html",
    "fix the bug in getUserName inside user_service.py",
    "deploy to production with kubectl apply",
    "run the linter with ruff check",
]


@pytest.mark.parametrize(("query", "best"), [
    ("how do I run tests", 0),
    ("user name service", 2),
    ("getUserName", 2),
    ("kubectl", 3),
    ("sphinx docs html", 1),
    ("ruff", 4),
])
def test_top_puts_the_matching_document_first(query: str, best: int) -> None:
    assert BM25Index(DOCS).top(query, k=3)[0][0] == best


def test_scores_are_zero_without_shared_tokens_and_top_leaves_them_out() -> None:
    index = BM25Index(DOCS)
    assert index.scores("zebra quantum") == [0.0] * len(DOCS)
    assert index.top("zebra quantum") == []
    assert all(i in (0, 4) for i, _ in index.top("run", k=10))


def test_rare_terms_weigh_more_than_common_ones() -> None:
    index = BM25Index(DOCS)
    scores = index.scores("the kubectl")
    assert scores[3] > max(s for i, s in enumerate(scores) if i != 3)


def test_top_is_deterministic_with_ties_broken_by_index() -> None:
    index = BM25Index(["same text", "same text", "other"])
    assert [i for i, _ in index.top("same", k=2)] == [0, 1]
    assert index.top("same", k=0) == []


def test_empty_index_and_empty_query() -> None:
    assert BM25Index([]).scores("x") == [] and BM25Index([]).top("x") == []
    assert BM25Index(DOCS).top("") == []


def test_importing_bm25_does_not_import_numpy() -> None:
    code = "import sys; from habitus.index.bm25 import BM25Index; import habitus.index; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
