"""End to end on the fixture generator: 12 sessions of 3 task kinds with detours → ingest → learn → recall.

Recall on new tasks of each kind (values no session used) picks that kind's workflow with the task's
values filled; recall on unrelated tasks picks nothing (issue 4 §7).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from backends import connect, home_env, open_store
from habitus.bench.fixture import Fixture, make_fixture_repo
from habitus.capture.ingest import ingest_paths
from habitus.core.workflow import Workflow
from habitus.learn import learn
from habitus.recall import recall


@dataclass
class Learned:
    fixture: Fixture
    db: Path
    by_kind: dict[str, Workflow]


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Learned:
    root = tmp_path_factory.mktemp("recall-e2e")
    fx = make_fixture_repo(root / "fx", seed=0, sessions=12)
    assert len(fx.sessions) >= 12 and len({s.kind for s in fx.sessions} - {"inspect"}) >= 3
    assert any(s.detour for s in fx.sessions)
    db = root / "habitus.db"
    store = open_store(db)
    try:
        assert not ingest_paths([fx.root / "claude", fx.root / "codex"], store).errors
    finally:
        store.close()
    conn = connect(db)
    try:
        report = learn(conn)
    finally:
        conn.close()
    by_kind = {}
    for kind in fx.kinds:
        ids = {s.session_id for s in fx.sessions if s.kind == kind}
        for wf in report.workflows:
            if {src.trace for src in wf.provenance.sources} & ids:
                by_kind[kind] = wf
    assert set(by_kind) == set(fx.kinds)
    return Learned(fixture=fx, db=db, by_kind=by_kind)


def _recall(learned: Learned, task: str):
    conn = connect(learned.db)
    try:
        return recall(task, cwd=learned.fixture.repo, conn=conn, log=False)
    finally:
        conn.close()


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("kind", ["shortcut", "endpoint", "config"])
def test_new_task_of_a_kind_gets_that_kinds_workflow_with_its_values(learned: Learned, kind: str, n: int) -> None:
    task, values = learned.fixture.new_task(kind, n)
    result = _recall(learned, task)
    assert result.workflow_ids[:1] == [learned.by_kind[kind].id], task
    sel = result.selected[0]
    stated = {v for v in values.values() if v in task}
    assert stated & set(sel.fills.values()), (task, sel.fills)
    assert all(v in task for v in sel.fills.values())  # fills are values the task states literally
    assert sel.validation is not None and not sel.validation.stale_steps
    assert result.chars <= 9_800


def test_unrelated_tasks_get_nothing(learned: Learned) -> None:
    for task in learned.fixture.unrelated_tasks():
        assert _recall(learned, task).selected == [], task


def test_cli_json_on_the_learned_fixture(learned: Learned) -> None:
    task, _ = learned.fixture.new_task("shortcut", 0)
    done = subprocess.run([str(Path(sys.executable).with_name("habitus")), "recall", task, "--cwd",
                           str(learned.fixture.repo), "--json", "--no-log"], capture_output=True, text=True,
                          timeout=60, env={**_env(), **home_env(learned.db)}, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["workflow_ids"] == [learned.by_kind["shortcut"].id]
    assert "web/src/shortcuts.ts:" in data["text"]


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
