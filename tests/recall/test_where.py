"""Where-to-look evidence for a named file (issue 13 §1–§3): how a plan names it, and how often naming it meant changing
it. Hand-built code index and repo map (the history's counts are the input under test)."""

from __future__ import annotations

from habitus.core.repomap import FileProfile, RepoMap
from habitus.core.tasktext import read_task
from habitus.index.code import CodeIndex
from habitus.recall.where import DEFAULT_MODEL, candidates, named_files, probabilities

CODE = CodeIndex(commit="c", files={"src/merge/consolidator.ts": ("consolidateFiles",), "src/merge/engine.ts": (),
                                    "test/fixtures/one/AGENTS.md": (), "docs/guide.md": ()})

PLAN = """Implement the following plan:

# Plan: Smarter merge

## Context

Today `src/merge/consolidator.ts` concatenates both files, and docs/guide.md describes it.

## Changes

### File: `src/merge/engine.ts`
- call the new merge; keep docs/guide.md in sync
"""


def test_a_plan_says_which_files_it_changes_and_which_it_only_describes() -> None:
    named = named_files(read_task(PLAN), CODE)
    assert named["src/merge/consolidator.ts"].context_only  # only in the context: what the work starts from
    assert not named["src/merge/engine.ts"].context_only and named["src/merge/engine.ts"].strong
    assert not named["docs/guide.md"].context_only  # also under the changes heading
    plain = named_files(read_task("Today src/merge/consolidator.ts concatenates; fix it"), CODE)
    assert not plain["src/merge/consolidator.ts"].context_only  # a plain request has no context section


def _chance(repomap: RepoMap, task: str, path: str) -> float:
    ranked = probabilities(candidates(task, repomap, CODE), DEFAULT_MODEL)
    return next(c.chance for c in ranked if c.file == path)


def test_a_file_often_named_and_never_changed_is_strong_evidence_against_it() -> None:
    # `AGENTS.md` resolves to the only file of that name, a test fixture: past plans named it ten times as the
    # subject of the work and never changed it; one named once and not changed is barely different from unknown
    task = "# Plan: Merge AGENTS.md into one file\n\n## Changes\n\nUpdate AGENTS.md handling in docs/guide.md\n\n.\n"
    often = RepoMap(subject="s", files={"test/fixtures/one/AGENTS.md": FileProfile(named=10, named_edited=0),
                                        "docs/guide.md": FileProfile(tasks=3, named=3, named_edited=3)}, tasks=12)
    once = RepoMap(subject="s", files={"test/fixtures/one/AGENTS.md": FileProfile(named=1, named_edited=0),
                                       "docs/guide.md": FileProfile(tasks=3, named=3, named_edited=3)}, tasks=12)
    fixture = "test/fixtures/one/AGENTS.md"
    feature = {c.file: c.features["named_rate"] for c in candidates(task, often, CODE)}
    assert feature[fixture] < -2.0
    assert feature["docs/guide.md"] > 0
    assert _chance(often, task, fixture) < 0.5 * _chance(once, task, fixture)
    assert _chance(often, task, "docs/guide.md") > _chance(often, task, fixture)


def test_a_map_stored_before_the_log_odds_feature_ignores_its_old_weight_until_relearned() -> None:
    old = RepoMap.from_dict({"format": 1, "model": {"bias": -3.0, "named_rate": 1.7}})
    assert old.model == {"bias": -3.0}
    assert RepoMap.from_dict(RepoMap(model={"bias": -3.0, "named_rate": 0.6}).to_dict()).model["named_rate"] == 0.6


def test_reasons_are_short_and_say_only_what_holds() -> None:
    # a file named by path that also defines the symbol the task names: one "named", then the symbol (before:
    # "named in the task; defines `consolidateFiles`, named in the task"); a file the past tasks' words barely
    # touch gets no "changed in N past tasks" (before: any shared word made it a reason)
    repomap = RepoMap(subject="s", tasks=5, files={
        "src/merge/consolidator.ts": FileProfile(tasks=2, terms={"merg": 2, "consolid": 2}, examples=["Merge docs"]),
        "docs/guide.md": FileProfile(tasks=3, terms={"merg": 1, "guid": 3, "write": 3, "tone": 3, "style": 3},
                                     examples=["Write the guide"])})
    task = "Make `consolidateFiles` in src/merge/consolidator.ts merge headings by level, keeping the tone"
    why = {c.file: c.reasons for c in candidates(task, repomap, CODE)}
    assert why["src/merge/consolidator.ts"][:2] == ["named in the task", "defines `consolidateFiles`"]
    assert not any(r.startswith("changed in") for r in why.get("docs/guide.md", []))
