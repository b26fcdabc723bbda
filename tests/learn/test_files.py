"""Workflow files (format 1): YAML round trip keeps unknown keys; bad files are refused whole."""

from __future__ import annotations

import pytest

from habitus.core.workflow import Fill, Place, Workflow, WorkflowStep
from habitus.learn.files import WorkflowFileError, dump_workflows, import_file, parse_workflows
from habitus.store.memory import load_workflows
from habitus.store.sqlite import connect

DOC = """format: 1
id: wf-shortcut
name: Add keyboard shortcut
use_when: adding a keyboard shortcut
intent: change
only_if_asked: false
cues: {any: [keyboard shortcut], none: [menu only], steps: [{step: 2, any: [docs], none: []}]}
blanks: [{name: key, meaning: the key}]
fills: [{blank: "{key}", from: key, n: 1}, {blank: "{cmd}", from: after, n: 1, phrase: for}]
steps:
  - {do: "Register {key}", place: {file: web/src/shortcuts.ts, chain: [SHORTCUTS]}, when: null}
  - {do: "Document it", place: null, when: "the task mentions docs"}
checks: [npm test -- --run]
pitfalls: [{text: use --run, trigger: {on: command, all: [npm test], none: [--run]}}]
provenance: {sources: [{trace: t1, commit: abc, date: "2026-01-01"}], last_verified: null}
x-team-owner: ui-team
review: {approved: true, by: [ana]}
"""


def test_round_trip_preserves_every_known_and_unknown_key():
    [wf] = parse_workflows(DOC)
    assert wf.extra == {"x-team-owner": "ui-team", "review": {"approved": True, "by": ["ana"]}}
    assert wf.fills[1] == Fill(blank="{cmd}", source="after", n=1, phrase="for")
    [again] = parse_workflows(dump_workflows([wf]))
    assert again.to_dict() == wf.to_dict()


def test_one_document_per_workflow():
    wfs = [Workflow(id=f"w{i}", name=f"n{i}", steps=[WorkflowStep(do="x", place=Place("a.py", ["f"]))])
           for i in range(3)]
    text = dump_workflows(wfs)
    assert text.count("\n---") + text.startswith("---") == 3
    assert [w.id for w in parse_workflows(text)] == ["w0", "w1", "w2"]


def test_export_without_lifecycle_leaves_out_status_and_counters():
    text = dump_workflows([Workflow(id="w", name="n")], lifecycle=False)
    assert "counters" not in text and "status" not in text


@pytest.mark.parametrize(("text", "message"), [
    ("id: [unclosed", "not valid YAML"),
    ("- just a list", "must be a mapping"),
    ("name: no id", "needs at least `id`"),
    ("id: a\nname: b\nformat: 99", "newer"),
    ("id: a\nname: b\nintent: maybe", "`intent`"),
    ("id: a\nname: b\nsteps: {do: x}", "`steps` must be a list"),
    ("id: a\nname: b\nsteps: [{do: x, place: {chain: []}}]", "needs a `file`"),
    ("id: a\nname: b\nfills: [{blank: '{x}', from: nowhere}]", "`from`"),
    ("id: a\nname: b\n---\nid: a\nname: c", "duplicate"),
    ("", "no workflow documents"),
])
def test_bad_files_are_refused_with_the_document_named(text, message):
    with pytest.raises(WorkflowFileError, match=message):
        parse_workflows(text, source="f.yaml")


def test_import_stores_nothing_when_one_document_is_bad(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(DOC + "---\nid: broken\nname: x\nintent: maybe\n")
    conn = connect()
    with pytest.raises(WorkflowFileError, match="document 2"):
        import_file(conn, path, subject="root1")
    assert load_workflows(conn, status=None) == []
    path.write_text(DOC)
    [wf] = import_file(conn, path, subject="root1@remote")
    [stored] = load_workflows(conn, "root1")
    assert stored.id == wf.id and stored.subject == "root1@remote"
    assert stored.extra["x-team-owner"] == "ui-team"


def test_import_without_repo_needs_a_subject_in_the_file(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(DOC)
    with pytest.raises(WorkflowFileError, match="--repo"):
        import_file(connect(), path, subject=None)
