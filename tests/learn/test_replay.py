"""The replay gate (issue 9 §2): a new build must serve the repo's recorded tasks at least as well as memory does.

On the learned fixture repo (real sessions → ingest → learn, real git): a build whose workflows point
at the wrong places is rejected and kept for inspection; a correct build is accepted; `habitus learn`
reports the replay figures in --json and lists rejected builds with --show-rejected.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from tests.learn.conftest import Learned
from typer.testing import CliRunner

from backends import connect, copy_db, home_env
from habitus.core.workflow import Place, Workflow
from habitus.learn.induce import induce
from habitus.learn.replay import gate, gate_build, load_rejected, places_agree
from habitus.store.memory import load_records, load_workflows


@pytest.fixture
def db(learned: Learned, tmp_path: Path) -> Path:
    """A private copy of the learned database (tests here write rejected builds)."""
    target = tmp_path / "habitus.db"
    copy_db(learned.db, target)
    return target


def _subject(learned: Learned) -> str:
    return learned.report.subjects[0]


def _corrupt(workflows: list[Workflow], files: dict[str, str]) -> list[Workflow]:
    """Copies of `workflows` whose steps at `files` keys point at the mapped (wrong, existing) files instead."""
    out = copy.deepcopy(workflows)
    for wf in out:
        for step in wf.steps:
            if step.place is not None and step.place.file in files:
                step.place = Place(file=files[step.place.file], chain=[])
    return out


WRONG = {"web/src/shortcuts.ts": "server/db.py", "web/src/app.ts": "README.md", "server/api.py": "package.json"}


@pytest.mark.parametrize(("label", "places", "agree"), [
    ("same file, same chain", (Place("a.py", ["class A", "f"]), Place("a.py", ["class A", "f"])), True),
    ("same file, one chain is a prefix", (Place("a.py", ["class A"]), Place("a.py", ["class A", "f"])), True),
    ("same file, whole-file place", (Place("a.py", []), Place("a.py", ["class A"])), True),
    ("same file, other block", (Place("a.py", ["class B"]), Place("a.py", ["class A"])), False),
    ("other file", (Place("b.py", ["class A"]), Place("a.py", ["class A"])), False),
])
def test_places_agree_by_file_and_chain_prefix(label: str, places: tuple[Place, Place], agree: bool) -> None:
    assert places_agree(*places) is agree, label


def test_gate_rejects_a_build_pointing_at_wrong_places(learned: Learned, db: Path) -> None:
    conn = connect(db)
    try:
        records = load_records(conn, _subject(learned))
        current = load_workflows(conn, _subject(learned))
        verdict = gate(records, _corrupt(current, WRONG), current, learned.fixture.repo)
    finally:
        conn.close()
    assert not verdict.accepted
    assert verdict.candidate.found < verdict.current.found
    assert any("fewer edited places" in r for r in verdict.reasons)
    assert verdict.candidate.left_alone > verdict.current.left_alone


def test_gate_rejects_a_build_handed_to_questions_about_its_subject(learned: Learned, db: Path) -> None:
    conn = connect(db)
    try:
        records = load_records(conn, _subject(learned))
        current = load_workflows(conn, _subject(learned))
        chatty = copy.deepcopy(current)
        for wf in chatty:
            wf.intent = "inspect"  # wrongly learned as something to hand to questions and reviews
        verdict = gate(records, chatty, current, learned.fixture.repo)
    finally:
        conn.close()
    assert not verdict.accepted
    assert verdict.candidate.false_retrievals > verdict.current.false_retrievals == 0
    assert verdict.candidate.negatives >= 2 * len(current)  # the probes count as tasks that need nothing
    assert any("false retrievals" in r for r in verdict.reasons)


def test_negative_probes_mention_each_workflows_cue_without_asking_for_the_change(learned: Learned) -> None:
    from habitus.learn.replay import negative_probes
    from habitus.recall import classify_intent

    workflows = learned.report.workflows
    probes = negative_probes(workflows, [])
    for wf in workflows:
        assert any(wf.cues.any[0] in p for p in probes), wf.name
    assert all(classify_intent(p) == "inspect" for p in probes), probes


def test_gate_rejects_a_wrong_first_build_when_there_is_no_memory_yet(learned: Learned, db: Path) -> None:
    conn = connect(db)
    try:
        records = load_records(conn, _subject(learned))
        corrupted = _corrupt(load_workflows(conn, _subject(learned)), {
            **WRONG, "docs/shortcuts.md": "docs/api.md", "docs/api.md": "docs/config.md",
            "server/config.py": "server/db.py", "docs/config.md": "README.md"})
        verdict = gate(records, corrupted, [], learned.fixture.repo)
    finally:
        conn.close()
    assert not verdict.accepted
    assert verdict.current.handed == 0
    assert any("left alone" in r for r in verdict.reasons)


def test_gate_accepts_a_correct_build_over_no_memory_and_over_a_wrong_memory(learned: Learned, db: Path) -> None:
    conn = connect(db)
    try:
        records = load_records(conn, _subject(learned))
        good = induce(records, _subject(learned))
        first = gate(records, good, [], learned.fixture.repo)
        fix = gate(records, good, _corrupt(good, WRONG), learned.fixture.repo)
    finally:
        conn.close()
    assert first.accepted and not first.reasons
    assert first.candidate.found >= 0.9 * first.candidate.edited  # the fixture's tasks edit what was learned
    assert first.candidate.false_retrievals == 0 and first.candidate.negatives >= 1  # the read-only session
    assert fix.accepted and fix.candidate.found > fix.current.found


def test_rejected_build_is_kept_and_memory_is_unchanged(learned: Learned, db: Path) -> None:
    conn = connect(db)
    try:
        subject = _subject(learned)
        before = sorted(w.id for w in load_workflows(conn, subject))
        current = load_workflows(conn, subject)
        verdict = gate_build(conn, subject, load_records(conn, subject), _corrupt(current, WRONG),
                             repo=learned.fixture.repo)
        kept = load_rejected(conn, subject)
        after = sorted(w.id for w in load_workflows(conn, subject))
    finally:
        conn.close()
    assert not verdict.accepted and verdict.rejected_id is not None
    assert [r["id"] for r in kept] == [verdict.rejected_id]
    assert kept[0]["replay"]["accepted"] is False
    files = {s["place"]["file"] for w in kept[0]["workflows"] for s in w["steps"] if s.get("place")}
    assert "server/db.py" in files  # the wrong places are there to inspect
    assert before == after


def test_learn_reports_replay_figures_and_skips_an_unchanged_build(learned: Learned) -> None:
    first = learned.report.replay
    assert len(first) == 1 and first[0]["accepted"] and first[0]["skipped"] is None
    assert first[0]["candidate"]["tasks"] >= 10 and first[0]["candidate"]["found"] > 0
    from habitus.learn import learn

    conn = connect(learned.db)
    try:
        unchanged = learn(conn, repo=learned.fixture.repo)
        again = learn(conn, repo=learned.fixture.repo, force=True)
    finally:
        conn.close()
    assert unchanged.replay == [] and unchanged.unchanged == [_subject(learned)]  # nothing new: no replay at all
    assert again.replay[0]["accepted"] and again.replay[0]["skipped"] == "the build is the current memory"


def test_cli_learn_json_has_replay_and_show_rejected_lists_kept_builds(learned: Learned, db: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from habitus.cli.main import app

    for name, value in home_env(db).items():
        monkeypatch.setenv(name, value)
    conn = connect(db)
    try:
        subject = _subject(learned)
        gate_build(conn, subject, load_records(conn, subject), _corrupt(load_workflows(conn, subject), WRONG),
                   repo=learned.fixture.repo)
    finally:
        conn.close()
    runner = CliRunner()
    done = runner.invoke(app, ["learn", "--repo", str(learned.fixture.repo), "--rebuild", "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["replay"] and data["replay"][0]["accepted"]
    shown = runner.invoke(app, ["learn", "--show-rejected", "--json"])
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)
    assert len(rows) == 1 and rows[0]["replay"]["accepted"] is False
    assert any(s["file"] == "server/db.py" for w in rows[0]["workflows"] for s in w["steps"])
    text = runner.invoke(app, ["learn", "--show-rejected"])
    assert "REJECTED" in text.stdout and "server/db.py" in text.stdout
    rejected_before = len(rows)
    quiet = runner.invoke(app, ["learn", "--repo", str(learned.fixture.repo)])  # nothing new since
    assert quiet.exit_code == 0 and quiet.stdout.startswith("nothing new since the last learn"), quiet.output
    after = json.loads(runner.invoke(app, ["learn", "--show-rejected", "--json"]).stdout)
    assert len(after) == rejected_before  # no second copy of a rejected build


def _figures(found: int, handed: int, left_alone: int, false: int, negatives: int = 10, edited: int = 40):
    from habitus.learn.replay import ReplayFigures

    return ReplayFigures(tasks=20, negatives=negatives, edited=edited, found=found, handed=handed,
                         left_alone=left_alone, false_retrievals=false)


def test_a_relearn_trading_one_place_found_for_fewer_wrong_ones_is_accepted() -> None:
    """Issue 13 §4: candidate vs current memory by one net score (found − left alone − false retrievals)."""
    from habitus.learn.replay import judge

    current = _figures(found=20, handed=30, left_alone=10, false=1)
    candidate = _figures(found=19, handed=22, left_alone=3, false=1)
    assert judge(candidate, current, first=False) == []
    worse = _figures(found=20, handed=40, left_alone=20, false=2)
    [reason] = judge(worse, current, first=False)
    assert "net -2 vs 9" in reason and "hands over more places the tasks left alone" in reason
    assert "more false retrievals" in reason


def test_a_first_build_with_one_false_retrieval_is_accepted_when_it_beats_nothing() -> None:
    from habitus.learn.replay import judge

    nothing = _figures(found=0, handed=0, left_alone=0, false=0)
    assert judge(_figures(found=12, handed=15, left_alone=3, false=1), nothing, first=True) == []
    reasons = judge(_figures(found=5, handed=12, left_alone=7, false=1), nothing, first=True)
    assert len(reasons) == 1 and "no better than handing nothing: net -3" in reasons[0]
    chatty = judge(_figures(found=12, handed=15, left_alone=3, false=4, negatives=10), nothing, first=True)
    assert chatty and "too many false retrievals on tasks that need nothing: 4 of 10" in chatty[-1]
