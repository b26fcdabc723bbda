"""The store tests run on both backends (SQLite and a real PostgreSQL; see tests/backends.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _both_stores(store_backend: str) -> str:
    return store_backend
