"""Feedback and lifecycle: a hand-over is judged against what the receiving run edited."""

from __future__ import annotations

import pytest

from backends import connect
from habitus.bench.fixture import make_fixture_repo
from habitus.core.record import EditFact, Record
from habitus.core.workflow import Place, Workflow, WorkflowStep
from habitus.learn.feedback import apply_feedback, judge
from habitus.store.memory import get_workflow, list_handovers, log_handover, save_workflows

from .conftest import ingest_and_learn


@pytest.mark.parametrize(("shown", "edited", "verdict"), [
    ({"a.ts", "b.ts"}, {"a.ts", "b.ts", "c.md"}, "helped"),
    ({"a.ts", "b.ts"}, {"a.ts"}, "helped"),          # half the shown files
    ({"a.ts", "b.ts", "c.ts"}, {"a.ts"}, None),      # some, not half: no verdict
    ({"a.ts"}, {"z.py"}, "misled"),
    ({"a.ts"}, set(), None),                         # no edits: nothing to say
])
def test_judge(shown, edited, verdict):
    assert judge(shown, edited) == verdict


def _handover(conn, session: str, wf: Workflow) -> int:
    return log_handover(conn, {"task": "t", "session_id": session, "subject": "s1", "workflows": [wf.id],
                               "steps": [{"workflow": wf.id, "step": 1, "place": wf.steps[0].place.to_dict()}],
                               "chars": 100})


def _record(session: str, file: str) -> Record:
    return Record(trace_id=f"tr-{session}", session_id=session, outcome="success",
                  edits=[EditFact(file=file, places=[Place(file, [])])])


def test_three_misleading_hand_overs_suspend_the_workflow():
    conn = connect()
    wf = Workflow(id="w1", name="n", steps=[WorkflowStep(do="x", place=Place("web/app.ts", ["class App"]))])
    save_workflows(conn, "s1", [wf])
    for i in range(3):
        _handover(conn, f"sess{i}", wf)
        from habitus.store.memory import bump_counters

        bump_counters(conn, "w1", shown=1)
        [v] = apply_feedback(conn, _record(f"sess{i}", "server/db.py"))
        assert v["verdict"] == "misled"
    got = get_workflow(conn, "w1")
    assert got.status == "suspended" and "misled 3 of 3" in got.extra["status_reason"]


def test_each_hand_over_is_judged_once():
    conn = connect()
    wf = Workflow(id="w1", name="n", steps=[WorkflowStep(do="x", place=Place("web/app.ts", []))])
    save_workflows(conn, "s1", [wf])
    _handover(conn, "sess", wf)
    assert len(apply_feedback(conn, _record("sess", "web/app.ts"))) == 1
    assert apply_feedback(conn, _record("sess", "web/app.ts")) == []
    assert get_workflow(conn, "w1").counters.helped == 1
    assert list_handovers(conn, session_id="sess")[0]["feedback_trace"] == "tr-sess"


def test_learning_a_session_that_received_a_hand_over_counts_help(tmp_path):
    fx = make_fixture_repo(tmp_path / "fx", seed=2, sessions=6, inspect=False)
    db = tmp_path / "h.db"
    report = ingest_and_learn(fx, db)
    shortcut = next(w for w in report.workflows if any("keyboard" in c for c in w.cues.any))
    helped_session = fx.add_session("shortcut")
    misled_session = fx.add_session("config")
    conn = connect(db)
    for sess in (helped_session, misled_session):
        log_handover(conn, {"task": sess.task, "session_id": sess.session_id, "subject": shortcut.subject,
                            "workflows": [shortcut.id],
                            "steps": [{"workflow": shortcut.id, "step": n, "place": s.place.to_dict()}
                                      for n, s in enumerate(shortcut.steps, 1)], "chars": 500})
    report = ingest_and_learn(fx, db)
    verdicts = {(f["workflow"], f["verdict"]) for f in report.feedback}
    assert verdicts == {(shortcut.id, "helped"), (shortcut.id, "misled")}
    counters = get_workflow(conn, shortcut.id).counters
    assert (counters.helped, counters.misled) == (1, 1)


def test_in_a_session_of_several_tasks_each_hand_over_is_judged_by_its_own_task():
    """Issue 13 §1: one record per task; the first task's edits must not judge the hand-over of the second."""
    conn = connect()
    wf = Workflow(id="w1", name="n", steps=[WorkflowStep(do="x", place=Place("web/app.ts", []))])
    save_workflows(conn, "s1", [wf])
    for task in ("Fix the login form", "Add a dark mode toggle to web/app.ts"):
        log_handover(conn, {"task": task, "session_id": "multi", "subject": "s1", "workflows": ["w1"],
                            "steps": [{"workflow": "w1", "step": 1, "place": {"file": "web/app.ts", "chain": []}}],
                            "chars": 100})
    first = Record(trace_id="multi", session_id="multi", task="Fix the login form", outcome="success",
                   edits=[EditFact(file="server/auth.py")], meta={"task_index": 1, "tasks": 2})
    second = Record(trace_id="multi#2", session_id="multi", task="Add a dark mode toggle to web/app.ts",
                    outcome="success", edits=[EditFact(file="web/app.ts")], meta={"task_index": 2, "tasks": 2})
    [v1] = apply_feedback(conn, first)
    assert v1["verdict"] == "misled"
    [v2] = apply_feedback(conn, second)
    assert v2["verdict"] == "helped"
