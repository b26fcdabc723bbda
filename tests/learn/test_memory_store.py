"""The memory tables: workflows with lifecycle counters, records and the hand-over log, on real SQLite."""

from __future__ import annotations

import pytest

from backends import connect
from habitus.core.record import CommandFact, Detour, EditFact, Record
from habitus.core.workflow import Place, Workflow, WorkflowStep
from habitus.store import memory

SUBJECT = "abc123@git@example.com:x/y.git"


def _wf(wf_id: str, name: str = "Add a shortcut") -> Workflow:
    return Workflow(id=wf_id, name=name, steps=[WorkflowStep(do="edit", place=Place("src/app.ts", ["class App"]))],
                    extra={"x-custom": {"keep": True}})


@pytest.fixture
def conn():
    c = connect()
    yield c
    c.close()


def test_save_then_load_round_trips_a_workflow_with_unknown_keys(conn):
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    [got] = memory.load_workflows(conn, SUBJECT)
    assert got.id == "w1" and got.subject == SUBJECT
    assert got.steps[0].place.chain == ["class App"]
    assert got.extra["x-custom"] == {"keep": True}


def test_clone_with_other_remote_shares_workflows_by_root_commit(conn):
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    assert [w.id for w in memory.load_workflows(conn, "abc123")] == ["w1"]
    assert memory.load_workflows(conn, "other") == []


def test_save_replaces_the_build_but_keeps_archived_and_imported(conn):
    memory.save_workflows(conn, SUBJECT, [_wf("w1"), _wf("w2")])
    memory.set_workflow_status(conn, "w2", "archived")
    memory.import_workflows(conn, SUBJECT, [_wf("imp")])
    memory.save_workflows(conn, SUBJECT, [_wf("w3")])
    ids = {w.id: w.status for w in memory.load_workflows(conn, SUBJECT, status=None)}
    assert ids == {"w2": "archived", "w3": "active", "imp": "active"}


def test_relearning_reactivates_a_suspended_workflow_with_fresh_counters(conn):
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    memory.bump_counters(conn, "w1", shown=3, misled=3)
    assert memory.get_workflow(conn, "w1").status == "suspended"
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    got = memory.get_workflow(conn, "w1")
    assert got.status == "active" and got.counters.shown == 0


def test_relearning_keeps_counters_of_an_active_workflow(conn):
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    memory.bump_counters(conn, "w1", shown=2, helped=1)
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    assert memory.get_workflow(conn, "w1").counters.to_dict() == {"shown": 2, "helped": 1, "misled": 0, "stale": 0}


@pytest.mark.parametrize(("bumps", "status"), [
    ({"shown": 3, "helped": 1, "misled": 2}, "suspended"),   # misled rate 0.67
    ({"shown": 3, "helped": 2, "misled": 1}, "active"),      # misled rate 0.33
    ({"shown": 2, "misled": 2}, "active"),                   # too few shows
    ({"shown": 4, "stale": 2}, "suspended"),                 # stale rate 0.5
    ({"shown": 4, "stale": 1}, "active"),
])
def test_bump_counters_applies_the_lifecycle_rule(conn, bumps, status):
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    memory.bump_counters(conn, "w1", **bumps)
    assert memory.get_workflow(conn, "w1").status == status


def test_bump_counters_on_unknown_workflow_returns_none(conn):
    assert memory.bump_counters(conn, "nope", shown=1) is None


def test_set_status_rejects_unknown_status_and_id(conn):
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    with pytest.raises(ValueError):
        memory.set_workflow_status(conn, "w1", "deleted")
    with pytest.raises(KeyError):
        memory.set_workflow_status(conn, "nope", "archived")


def test_last_verified_is_stored_in_provenance(conn):
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    memory.set_last_verified(conn, "w1", "2026-11-29T00:00:00+00:00")
    assert memory.get_workflow(conn, "w1").provenance.last_verified == "2026-11-29T00:00:00+00:00"


def test_handover_log_filters_by_session_and_subject(conn):
    a = memory.log_handover(conn, {"task": "t1", "session_id": "s1", "subject": SUBJECT, "workflows": ["w1"],
                                   "steps": [{"workflow": "w1", "place": {"file": "a.ts", "chain": []}}], "chars": 10})
    memory.log_handover(conn, {"task": "t2", "session_id": "s2", "subject": "zzz", "workflows": [], "chars": 0})
    [got] = memory.list_handovers(conn, session_id="s1")
    assert got["id"] == a and got["task"] == "t1" and got["created"]
    assert [h["task"] for h in memory.list_handovers(conn, subject="abc123")] == ["t1"]
    assert memory.mark_handover_feedback(conn, a, "trace-1") is True
    assert memory.mark_handover_feedback(conn, a, "trace-1") is False


def test_records_round_trip_and_filter_by_subject(conn):
    rec = Record(trace_id="t1", subject=SUBJECT, task="Add X", date="2026-01-01",
                 edits=[EditFact(file="a.py", places=[Place("a.py", ["def f"])], added=["x = 1"], tool="Edit")],
                 commands=[CommandFact(command="pytest", exit_code=0)], checks=["pytest"],
                 detours=[Detour(failing="npm test", fixing="npm test -- --run", tokens=120)])
    memory.save_records(conn, [rec, Record(trace_id="t2", subject="other")])
    [got] = memory.load_records(conn, SUBJECT)
    assert got.to_dict() == rec.to_dict()
    assert len(memory.load_records(conn)) == 2


def test_importing_an_id_of_another_repo_keeps_both(conn):
    memory.save_workflows(conn, SUBJECT, [_wf("w1")])
    [new_id] = memory.import_workflows(conn, "otherroot", [_wf("w1")])
    assert new_id != "w1"
    assert [w.id for w in memory.load_workflows(conn, SUBJECT)] == ["w1"]
    assert [w.id for w in memory.load_workflows(conn, "otherroot")] == [new_id]
    # nor does it replace a learned workflow of the same repo; importing it again updates that import
    first = memory.import_workflows(conn, SUBJECT, [_wf("w1")])
    assert first != ["w1"] and memory.import_workflows(conn, SUBJECT, [_wf("w1")]) == first
    assert memory.import_workflows(conn, "otherroot", [_wf("w1")]) == [new_id]
