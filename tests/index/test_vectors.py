"""tfidf embeddings, numpy ranking, the store's vector cache and the OpenAI-compatible embedder."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from habitus.index.embedders import EmbedderError, TfidfEmbedder, get_embedder
from habitus.index.vectors import embed_cached, rank, search
from habitus.store import vectors as store
from habitus.store.sqlite import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llm_stubs import Reply, stub_server  # noqa: E402

CORPUS = [
    "run the unit tests with pytest",
    "build the documentation with sphinx",
    "deploy the service with kubectl apply",
    "fix failing tests in the parser module",
    "update the changelog before a release",
]


def test_tfidf_is_deterministic_across_fits() -> None:
    a, b = TfidfEmbedder().fit(CORPUS), TfidfEmbedder().fit(list(CORPUS))
    assert a.model == b.model and a.model.startswith("tfidf-")
    assert np.array_equal(a.embed(CORPUS), b.embed(CORPUS))


def test_tfidf_lsa_is_deterministic_and_reduced() -> None:
    a, b = TfidfEmbedder(lsa_dims=3).fit(CORPUS), TfidfEmbedder(lsa_dims=3).fit(CORPUS)
    va, vb = a.embed(CORPUS), b.embed(CORPUS)
    assert va.shape == (5, 3) and np.array_equal(va, vb)
    assert a.model.endswith("-lsa3")


def test_tfidf_fingerprint_changes_with_the_corpus() -> None:
    assert TfidfEmbedder().fit(CORPUS).model != TfidfEmbedder().fit(CORPUS[:3]).model


def test_vectors_are_float32_unit_rows_and_unknown_text_is_a_zero_row() -> None:
    vectors = TfidfEmbedder().fit(CORPUS).embed([*CORPUS, "zzzz qqqq"])
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:-1], axis=1), 1.0, atol=1e-5)
    assert not vectors[-1].any()


def test_tfidf_search_finds_the_related_document() -> None:
    assert search("the tests fail", CORPUS, k=2)[0][0] in (0, 3)
    assert search("kubectl deploy", CORPUS, k=1)[0][0] == 2


def test_tfidf_refuses_an_empty_vocabulary() -> None:
    with pytest.raises(EmbedderError, match="cannot fit"):
        TfidfEmbedder().fit(["!!!", "???"])


@pytest.mark.parametrize(("k", "expected"), [(1, [2]), (2, [2, 0]), (3, [2, 0, 1]), (10, [2, 0, 1, 3]), (0, [])])
def test_rank_orders_by_score_and_breaks_ties_by_index(k: int, expected: list[int]) -> None:
    matrix = np.array([[0.5, 0.0], [0.5, 0.0], [1.0, 0.0], [-1.0, 0.0]], dtype=np.float32)
    assert [i for i, _ in rank([1.0, 0.0], matrix, k)] == expected


def test_rank_rejects_a_dimension_mismatch() -> None:
    with pytest.raises(ValueError, match="dimensions"):
        rank([1.0, 0.0, 0.0], np.eye(2), 1)
    assert rank([1.0], np.zeros((0, 1)), 3) == []


class CountingTfidf(TfidfEmbedder):
    """A real tfidf embedder that counts the texts it actually had to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0

    def embed(self, texts):
        self.embedded += len(texts)
        return super().embed(texts)


def test_embed_cached_reuses_stored_vectors(habitus_home: Path) -> None:
    embedder = CountingTfidf().fit(CORPUS)
    conn = connect()
    first = embed_cached(embedder, CORPUS, conn)
    assert embedder.embedded == 5 and store.count_vectors(conn, "tfidf") == 5
    second = embed_cached(embedder, [CORPUS[1], CORPUS[0], CORPUS[1]], conn)
    assert embedder.embedded == 5  # all from the store
    assert np.array_equal(second[0], first[1]) and np.array_equal(second[1], first[0])
    refit = CountingTfidf().fit(CORPUS[:3])  # another fit is another model: no reuse
    embed_cached(refit, CORPUS[:2], conn)
    assert refit.embedded == 2 and store.count_vectors(conn) == 7
    assert store.clear_vectors(conn, "tfidf") == 7


def test_embed_cached_uses_the_default_database(habitus_home: Path) -> None:
    embed_cached(TfidfEmbedder().fit(CORPUS), CORPUS[:2])
    assert (habitus_home / "habitus.db").is_file()
    assert store.count_vectors(connect()) == 2


def test_vector_key_depends_on_every_part() -> None:
    keys = {store.vector_key("t", "e", "m", "u"), store.vector_key("t2", "e", "m", "u"),
            store.vector_key("t", "e2", "m", "u"), store.vector_key("t", "e", "m2", "u"),
            store.vector_key("t", "e", "m", "u2"), store.vector_key("t", "e", "m", None)}
    assert len(keys) == 6


def test_unknown_embedder_is_a_clear_error() -> None:
    with pytest.raises(EmbedderError, match="unknown embedder 'word2vec'"):
        get_embedder("word2vec")


def test_embedder_name_from_config(monkeypatch) -> None:
    from habitus.llm.config import set_value

    set_value("embed.embedder", "tfidf")
    set_value("embed.lsa_dims", "2")
    embedder = get_embedder(None)
    assert embedder.name == "tfidf" and embedder.lsa_dims == 2


def _embedding_answer(vectors: list[list[float]], reverse: bool = False) -> dict:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return {"object": "list", "data": data[::-1] if reverse else data, "model": "stub-embed",
            "usage": {"prompt_tokens": 3 * len(vectors), "total_tokens": 3 * len(vectors)}}


def test_openai_embedder_batches_orders_by_index_and_normalises() -> None:
    replies = [Reply(_embedding_answer([[3.0, 4.0], [0.0, 2.0]], reverse=True)), Reply(_embedding_answer([[1.0, 0.0]]))]
    with stub_server(replies) as stub:
        embedder = get_embedder("openai", model="qwen3-embedding", base_url=stub.url + "/v1", batch_size=2)
        vectors = embedder.embed(["a", "b", "c"])
    assert [r["path"] for r in stub.requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert stub.requests[0]["json"] == {"model": "qwen3-embedding", "input": ["a", "b"]}
    assert "authorization" not in stub.requests[0]["headers"]  # a local server needs no key
    assert np.allclose(vectors, [[0.6, 0.8], [0.0, 1.0], [1.0, 0.0]])
    assert embedder.input_tokens == 9


def test_openai_embedder_rejects_a_wrong_vector_count() -> None:
    with stub_server([Reply(_embedding_answer([[1.0, 0.0]]))]) as stub:
        embedder = get_embedder("openai", model="m", base_url=stub.url + "/v1", api_key="k")
        with pytest.raises(EmbedderError, match="1 vectors for 2 texts"):
            embedder.embed(["a", "b"])
    assert stub.requests[0]["headers"]["authorization"] == "Bearer k"


def test_openai_embedder_reports_http_errors() -> None:
    with stub_server([Reply({"error": {"message": "no such model"}}, status=404)]) as stub:
        embedder = get_embedder("openai", model="m", base_url=stub.url + "/v1")
        with pytest.raises(EmbedderError, match="HTTP 404: no such model"):
            embedder.embed(["a"])


def test_openai_embedder_needs_a_key_for_the_hosted_api(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbedderError, match="OPENAI_API_KEY"):
        get_embedder("openai").embed(["a"])
