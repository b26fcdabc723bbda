"""Acceptance: the session-start injection plus the rules block stay within one fixed bound as memory grows."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.deliver.layer import measure_layer, populate

from .conftest import make_repo


def _repo(base: Path) -> Path:
    return make_repo(base, "# generated\n")


@pytest.mark.parametrize("n", [10, 100, 1_000, 10_000])
def test_layer_stays_within_the_fixed_bound(tmp_path: Path, n: int) -> None:
    repo = _repo(tmp_path)
    conn = connect()
    populate(conn, repo_subject(repo), n)
    sizes = measure_layer(conn, repo)
    assert sizes["injection_chars"] > 0  # the hook did hand something over
    assert sizes["block_lines"] <= 15 and sizes["block_chars"] <= 1_500
    assert sizes["total_chars"] <= sizes["bound_chars"] == 9_000 + 1_500
