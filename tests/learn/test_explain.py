"""`habitus learn` in words: traces and records as what they are, a rejected build explained, what to do next."""

from __future__ import annotations

from typing import Any

import pytest

from habitus.learn.explain import explain

FIGURES = {"tasks": 14, "negatives": 58, "edited": 112, "found": 0, "handed": 0, "left_alone": 0,
           "false_retrievals": 4, "left_alone_share": 0.0, "net": -4.0}
CURRENT = {**FIGURES, "false_retrievals": 0, "net": 0.0}
REJECTED = {"subject": "s", "accepted": False, "reasons": ["serves past tasks no better than handing nothing"],
            "skipped": None, "candidate": FIGURES, "current": CURRENT, "rejected_id": 4, "workflows": ["wf-a"]}
MAP = {"tasks": 175, "files": 126, "checks": ["go test ./..."], "traps": 3, "accepted": True, "model": "fitted",
       "thresholds": {"handover_chance": 0.35, "min_chance": 0.25},
       "out_of_sample": {"helped": 59, "tasks": 166, "right": 79, "handed": 131, "handovers": 71}}


def report(**changes: Any) -> dict[str, Any]:
    base = {"subjects": ["s"], "traces_seen": 246, "traces_new": 246, "records_new": 1073, "records_total": 1073,
            "skipped_no_subject": 0, "workflows": [], "feedback": [], "annotation": None, "replay": [],
            "repo_maps": [], "unchanged": [], "active_workflows": 0, "seconds": 14.2}
    return {**base, **changes}


def test_traces_and_records_are_counted_as_what_they_are() -> None:
    first = explain(report(replay=[REJECTED], repo_maps=[MAP]))[0]
    assert first == ("read 246 new or changed traces of the 246 in the store into 1073 task records (1073 in all) "
                     "in 14.2 s")


def test_a_rejected_build_says_why_in_words_and_what_stays_in_use() -> None:
    lines = explain(report(replay=[REJECTED], repo_maps=[MAP]))
    said = next(line for line in lines if "not used" in line)
    assert "replayed on 14 past tasks, they pointed to 0 of the 112 places those tasks edited" in said
    assert "handed something to 4 of 58 tasks that needed nothing" in said
    assert "no workflow is in use" in said and "#4" in said and "REJECTED" not in said
    assert not any("ingest coding sessions first" in line for line in lines)  # sessions were ingested
    assert lines[-1].startswith("next: `habitus recall")  # the repo map still serves hand-overs


def test_nothing_new_is_one_plain_line_and_a_next_step() -> None:
    lines = explain(report(traces_new=0, records_new=0, unchanged=["s"], active_workflows=3, seconds=0.4))
    assert lines[0] == ("nothing new since the last learn: 246 traces and 1073 task records already learned, "
                        "3 workflows in use; memory left as it was (0.4 s)")
    assert lines[1].startswith("next: after new sessions, `habitus ingest`")


@pytest.mark.parametrize(("changes", "expected"), [
    ({"traces_seen": 0, "traces_new": 0, "records_new": 0, "records_total": 0},
     "no traces in the store yet: ingest coding sessions first"),
    ({"replay": [{**REJECTED, "accepted": True, "workflows": []}]},
     "no workflow: no kind of task recurred in enough sessions to make one"),
    ({"skipped_no_subject": 2}, "2 traces ran outside a git repository"),
    ({"replay": [REJECTED], "active_workflows": 2}, "so the 2 workflows in use stay"),
])
def test_each_case_has_its_own_words(changes: dict[str, Any], expected: str) -> None:
    assert any(expected in line for line in explain(report(**changes)))


def test_nothing_served_yet_says_what_helps() -> None:
    lines = explain(report(replay=[REJECTED], repo_maps=[{**MAP, "accepted": False, "kept": "none", "reasons": []}]))
    assert lines[-1].startswith("next: nothing is handed over yet")


def test_an_accepted_build_says_what_it_did_on_past_tasks() -> None:
    figures = {**FIGURES, "found": 43, "edited": 45, "false_retrievals": 0, "negatives": 7}
    accepted = {**REJECTED, "accepted": True, "candidate": figures, "current": {**FIGURES, "found": 0}}
    lines = explain(report(replay=[accepted], active_workflows=3))
    assert ("  these workflows are now in use: replayed on 14 past tasks, they pointed to 43 of the 45 places those "
            "tasks edited (the memory before: 0) and handed something to 0 of 7 tasks that needed nothing "
            "(before: 4)") in lines
