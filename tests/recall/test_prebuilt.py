"""What the prompt hook reads of a repository is prebuilt (issue 22 §6): the same hand-over as when recall
builds HEAD's code index in place, no building on the hook's path, and an answer whatever state the prebuilt
data is in (missing, for an older commit, damaged, being rebuilt).

On a learned real-style history (habitus.bench.realstyle); each test works in its own clone.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from tests.realstyle_history import LearnedRealStyle, build, clone_of, recall_in

import habitus.index.code as code_module
from habitus.index.code import repo_cache_dir
from habitus.index.snapshot import CodeSnapshot, SnapshotError, snapshot_name
from habitus.recall.prebuild import prebuild, request_prebuild
from habitus.store.sqlite import connect

PLAN = """Implement the following plan:

# Plan: Show a retry button in the invoice view

## Context

Users of the invoice screen asked for a retry button. Today `InvoiceTable` does not handle it.

## Changes

**File:** `src/invoices/InvoiceTable.tsx`
- Update `InvoiceTable` to show a retry button.
"""


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> LearnedRealStyle:
    return build(tmp_path_factory.mktemp("rs-prebuilt"), sessions=36)


@pytest.fixture
def work(learned: LearnedRealStyle, tmp_path: Path) -> Path:
    return clone_of(learned, tmp_path / "clone")


@pytest.fixture(autouse=True)
def _embedded_store_only(store_backend: str) -> None:
    if store_backend == "postgres":
        pytest.skip("the code snapshot is local to a machine whatever the store: the embedded one is enough")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def _key(learned: LearnedRealStyle) -> str:
    return learned.report["subjects"][0].split("@", 1)[0]


def _snapshot(learned: LearnedRealStyle, work: Path) -> Path:
    return repo_cache_dir(_key(learned)) / snapshot_name(_git(work, "rev-parse", "HEAD"))


def _recall(learned: LearnedRealStyle, task: str, cwd: Path, **kw: object):  # noqa: ANN202
    return recall_in(learned, task, cwd, connect=connect, **kw)


def _exact(result) -> tuple:  # noqa: ANN001 - a RecallResult
    """Everything a hand-over says, with the evidence at full precision (to_dict rounds it)."""
    considered = [(c.file, c.chance, sorted(c.features.items()), c.reasons) for c in result.look.considered] \
        if result.look else None
    return json.dumps(result.to_dict(), sort_keys=True), result.text, considered


def _tasks(learned: LearnedRealStyle) -> list[str]:
    conn = connect(learned.db)
    try:
        rows = conn.execute("SELECT data FROM learn_records ORDER BY trace_id").fetchall()
    finally:
        conn.close()
    return [PLAN, *dict.fromkeys(t for (data,) in rows if (t := json.loads(data).get("task")))]


def _no_building(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the code index was built on the hook's path")

    monkeypatch.setattr(code_module, "code_index", refuse)


def test_the_prebuilt_snapshot_gives_the_hand_over_built_in_place(learned, work, monkeypatch) -> None:
    snapshot = _snapshot(learned, work)
    with_files = 0
    for task in _tasks(learned):
        snapshot.unlink(missing_ok=True)
        in_place = _recall(learned, task, work)  # builds HEAD's code index in memory (and writes no snapshot)
        assert not snapshot.is_file()
        assert prebuild(work)  # what learning, a session's end or the hook's request builds, outside the hook
        with monkeypatch.context() as mp:
            _no_building(mp)
            prebuilt = _recall(learned, task, work, quick=True)
        assert _exact(prebuilt) == _exact(in_place), task[:80]
        with_files += bool(in_place.files)
    assert with_files >= 5  # the comparison covered hand-overs that name files, not only abstentions


def test_the_hook_path_answers_without_where_to_look_until_the_snapshot_is_built(learned, work,
                                                                                 monkeypatch) -> None:
    monkeypatch.setenv("HABITUS_PREBUILD", "off")
    _snapshot(learned, work).unlink(missing_ok=True)
    with monkeypatch.context() as mp:
        _no_building(mp)
        early = _recall(learned, PLAN, work, quick=True)
    assert early.look is not None and early.look.files == []  # no where-to-look (the workflows' steps may name files)
    assert early.look.abstained == "HEAD's code index is being built"
    assert "npm test" in early.checks  # the map's checks and traps need no code index
    assert not _snapshot(learned, work).exists()
    assert prebuild(work) == _git(work, "rev-parse", "HEAD")
    assert _recall(learned, PLAN, work, quick=True).files[0] == "src/invoices/InvoiceTable.tsx"


def test_at_a_new_head_the_last_snapshot_answers_and_a_rebuild_is_requested(learned, work, monkeypatch) -> None:
    assert prebuild(work)
    requested: list[Path] = []
    monkeypatch.setattr("habitus.recall.prebuild.request_prebuild", lambda root: requested.append(root) or True)
    _git(work, "rm", "-q", "src/invoices/InvoiceTable.tsx")
    _git(work, "commit", "-q", "-m", "drop the table")
    with monkeypatch.context() as mp:
        _no_building(mp)
        result = _recall(learned, PLAN, work, quick=True)
    assert requested == [work.resolve()]
    assert "src/invoices/InvoiceTable.tsx" not in result.files  # in the older snapshot, gone from the work tree
    assert all((work / f).is_file() for f in result.files)
    monkeypatch.undo()
    assert prebuild(work) and _snapshot(learned, work).is_file()
    assert _exact(_recall(learned, PLAN, work, quick=True)) == _exact(_recall(learned, PLAN, work))


def test_a_damaged_snapshot_never_breaks_the_hook_and_is_rebuilt(learned, work, monkeypatch) -> None:
    monkeypatch.setenv("HABITUS_PREBUILD", "off")
    snapshot = _snapshot(learned, work)
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    snapshot.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    result = _recall(learned, PLAN, work, quick=True)
    assert result.look is not None and result.look.files == [] and result.look.abstained
    monkeypatch.setenv("HABITUS_PREBUILD", "inline")  # the requested rebuild, done here
    assert _exact(_recall(learned, PLAN, work, quick=True)) == _exact(_recall(learned, PLAN, work))


def test_a_snapshot_failing_mid_read_is_discarded(learned, work, monkeypatch) -> None:
    assert prebuild(work)
    snapshot = _snapshot(learned, work)

    def broken(self: CodeSnapshot, *_a: object, **_k: object) -> dict:
        raise SnapshotError("database disk image is malformed")

    monkeypatch.setenv("HABITUS_PREBUILD", "off")
    with monkeypatch.context() as mp:
        mp.setattr(CodeSnapshot, "top", broken)
        quick = _recall(learned, PLAN, work, quick=True)
        assert quick.look is not None and quick.look.abstained == "HEAD's code index is being rebuilt"
        assert not snapshot.exists()
        in_place = _recall(learned, PLAN, work)  # the CLI builds in place and answers in full
        assert prebuild(work) and snapshot.exists()
    assert in_place.files[0] == "src/invoices/InvoiceTable.tsx"
    assert _exact(in_place) == _exact(_recall(learned, PLAN, work, quick=True))


def test_a_requested_prebuild_runs_detached_once_per_work_tree(learned, work, monkeypatch) -> None:
    monkeypatch.setenv("HABITUS_PREBUILD", "background")
    snapshot = _snapshot(learned, work)
    snapshot.unlink(missing_ok=True)
    assert request_prebuild(work.resolve()) is True
    assert request_prebuild(work.resolve()) is False  # one build per work tree at a time
    deadline = time.monotonic() + 120
    lock = next((Path(os.environ["HABITUS_HOME"]) / "cache" / "repo").glob("building-*"), None)
    while (not snapshot.is_file() or (lock is not None and lock.exists())) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert snapshot.is_file() and not (lock and lock.exists())
    with monkeypatch.context() as mp:
        _no_building(mp)
        prebuilt = _recall(learned, PLAN, work, quick=True)
    snapshot.unlink()
    assert _exact(prebuilt) == _exact(_recall(learned, PLAN, work))
