"""Report pieces: the 2-D projection and the map PNG are deterministic and survive degenerate input."""

from __future__ import annotations

import numpy as np
import pytest

from habitus.refine.report import cluster_map_png, project_2d


@pytest.mark.parametrize("rows", [np.zeros((0, 4)), np.ones((1, 4)), np.ones((3, 4)), np.eye(4)[:3]])
def test_projection_has_two_columns_for_any_input(rows):
    points = project_2d(rows)
    assert points.shape == (len(rows), 2)
    assert np.all(np.isfinite(points))


def test_projection_sign_is_fixed():
    rows = np.random.default_rng(3).random((10, 6))
    assert np.array_equal(project_2d(rows), project_2d(rows.copy()))
    flipped = project_2d(-rows)
    assert np.allclose(np.abs(flipped), np.abs(project_2d(rows)))


def test_map_png_is_byte_identical_and_handles_noise_only():
    ids = ["a", "b", "c", "d"]
    vectors = np.eye(4)
    polarity = {"a": "success", "b": "success", "c": "failure", "d": "failure"}
    first = cluster_map_png(vectors, ids, {"a": 0, "b": 0, "c": -1, "d": -1}, polarity)
    assert first.startswith(b"\x89PNG")
    assert first == cluster_map_png(vectors, ids, {"a": 0, "b": 0, "c": -1, "d": -1}, polarity)
    assert b"Software" not in first
    assert cluster_map_png(np.zeros((0, 4)), [], {}, {}).startswith(b"\x89PNG")
