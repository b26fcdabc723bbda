"""The numpy TF-IDF of the core install gives scikit-learn's vectors (where scikit-learn is installed to compare)."""

from __future__ import annotations

import numpy as np
import pytest

from habitus.index.tfidf import TfidfModel, lsa_components
from habitus.index.tokenize import tokenize

CORPUS = [
    "Add a keyboard shortcut for export in ExportMenu.tsx",
    "Fix the flaky test in tests/test_parser.py; run pytest -k parser",
    "run the unit tests with pytest and pytest again",
    "getUserName returns None when the session expired",
    "update CHANGELOG.md before a release release release",
]


def test_the_numpy_tfidf_equals_scikit_learns() -> None:
    text = pytest.importorskip("sklearn.feature_extraction.text")
    reference = text.TfidfVectorizer(analyzer=tokenize, sublinear_tf=True)
    expected = reference.fit_transform(CORPUS).toarray()
    model = TfidfModel.fit(CORPUS, tokenize)
    assert model.vocabulary == {t: int(c) for t, c in reference.vocabulary_.items()}
    assert np.allclose(model.idf, reference.idf_)
    assert np.allclose(model.transform(CORPUS), expected, atol=1e-6)
    unseen = ["pytest the parser", "nothing known here zzz"]
    assert np.allclose(model.transform(unseen), reference.transform(unseen).toarray(), atol=1e-6)


def test_min_df_and_max_features_keep_the_frequent_shared_terms() -> None:
    model = TfidfModel.fit(CORPUS, tokenize, min_df=2)
    assert "pytest" in model.vocabulary and "keyboard" not in model.vocabulary
    top = TfidfModel.fit(CORPUS, tokenize, max_features=2)
    assert sorted(top.vocabulary) == ["pytest", "release"]  # 3 uses each, more than any other term


def test_a_corpus_without_terms_is_refused() -> None:
    with pytest.raises(ValueError, match="empty vocabulary"):
        TfidfModel.fit(["", "  ;; "], tokenize)


def test_lsa_components_are_orthonormal_and_sign_fixed() -> None:
    matrix = TfidfModel.fit(CORPUS, tokenize).transform(CORPUS)
    components = lsa_components(matrix, 3)
    assert components.shape == (3, matrix.shape[1])
    assert np.allclose(components @ components.T, np.eye(3), atol=1e-9)
    for row in components:
        assert row[np.argmax(np.abs(row))] > 0
