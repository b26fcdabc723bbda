"""The answer a replay gives a user: should the hand-overs be used on this repository?

`replay_verdict(run)` counts, over the replayed tasks, how often habitus handed at least one file
the session really changed (*right*) and how often it handed files of which none was (*wrong*),
the same for the five most-changed files of the history (the `most-changed` baseline, when it
ran), and the same again for the tasks that were pasted plans. `decide` turns those counts into
one of three pieces of advice, by the rules below, and `Verdict.sentence` says it in one sentence:

- **use** the hand-overs: at least `MIN_TASKS` replayed tasks that changed files, a right file for
  at least `MIN_RIGHT` of those, only wrong files for at most `MAX_WRONG` of all replayed tasks, and
  per-task F1 above the baseline's with the paired 95% interval above 0 (when the baseline ran);
- **plans only**: the same shares hold on the pasted-plan tasks (at least `MIN_PLANS` of them), with
  a mean F1 there above the baseline's, while they fail over all tasks;
- **not yet**: anything else, with the reason (too few tasks, nothing handed, too few right, too
  many wrong, no better than the baseline).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from habitus.bench.replay.metrics import TaskScore
    from habitus.bench.replay.runner import ReplayRun

MIN_TASKS = 10
MIN_PLANS = 5
MIN_RIGHT = 0.5
MAX_WRONG = 0.25
BASELINE = "most-changed"
USE, PLANS_ONLY, NOT_YET = "use", "plans-only", "not-yet"


@dataclass(frozen=True)
class Tally:
    """Right and wrong hand-overs of one selector over some tasks, and its mean per-task F1."""

    tasks: int  # replayed
    changed: int  # of which the session changed files (a right file was possible)
    handed: int  # tasks handed any file
    right: int  # tasks handed at least one file the session changed
    wrong: int  # tasks handed files, none of which the session changed
    f1: float  # mean per-task F1 over the tasks that changed files

    @classmethod
    def of(cls, scores: list[TaskScore]) -> Tally:
        changed = [s for s in scores if s.truth]
        return cls(tasks=len(scores), changed=len(changed), handed=sum(1 for s in scores if s.handed),
                   right=sum(1 for s in changed if s.right > 0), wrong=sum(1 for s in scores if s.false_handover),
                   f1=round(sum(s.f1 for s in changed) / len(changed), 4) if changed else 0.0)

    def good(self) -> bool:
        return (bool(self.changed) and self.right >= MIN_RIGHT * self.changed
                and self.wrong <= MAX_WRONG * self.tasks)


@dataclass(frozen=True)
class Verdict:
    advice: str  # USE, PLANS_ONLY or NOT_YET
    reason: str  # why, in words (empty for USE)
    habitus: Tally
    baseline: Tally | None
    plans: Tally
    plans_baseline: Tally | None
    f1_gain_low: float | None  # lower end of the paired 95% interval of habitus' F1 minus the baseline's
    sentence: str = field(default="")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pct(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "–"


def decide(habitus: Tally, baseline: Tally | None, plans: Tally, plans_baseline: Tally | None,
           f1_gain_low: float | None) -> tuple[str, str]:
    """(advice, reason) from the counts (see the module docstring)."""
    if habitus.changed < MIN_TASKS:
        return NOT_YET, (f"only {habitus.changed} replayed tasks changed files, too few to judge; ingest more "
                         "sessions of this repository and run it again")
    beats = baseline is None or (habitus.f1 > baseline.f1 and f1_gain_low is not None and f1_gain_low > 0)
    if habitus.good() and beats:
        return USE, ""
    plans_beat = plans_baseline is None or plans.f1 > plans_baseline.f1
    if plans.tasks >= MIN_PLANS and plans.good() and plans_beat:
        return PLANS_ONLY, (f"on the {plans.tasks} pasted plans it was right for {plans.right} and only wrong for "
                            f"{plans.wrong}")
    if not habitus.handed:
        return NOT_YET, ("it handed no file at all: it abstains where this history does not back a hand-over, so it "
                         "does no harm here, but no good either")
    if habitus.right < MIN_RIGHT * habitus.changed and habitus.handed < MIN_RIGHT * habitus.changed:
        return NOT_YET, (f"it handed files to only {habitus.handed} of the {habitus.tasks} tasks: it abstains where "
                         "this history does not back a hand-over")
    if habitus.right < MIN_RIGHT * habitus.changed:
        return NOT_YET, "it was right for too few tasks"
    if habitus.wrong > MAX_WRONG * habitus.tasks:
        return NOT_YET, "it handed only wrong files too often"
    return NOT_YET, "it was not clearly better than handing the five most-changed files"


def render(verdict: Verdict) -> str:
    """The verdict as one sentence a user can act on."""
    h, b = verdict.habitus, verdict.baseline
    said = (f"Of {h.tasks} replayed tasks, {h.changed} changed files: habitus handed a right file to {h.right} of "
            f"those {h.changed} ({_pct(h.right, h.changed)}) and only wrong files to {h.wrong} of the {h.tasks} "
            f"({_pct(h.wrong, h.tasks)})")
    if b is not None:
        said += (f", where the five most-changed files would have been right for {b.right} "
                 f"({_pct(b.right, b.changed)}) and only wrong for {b.wrong} ({_pct(b.wrong, b.tasks)})")
    if verdict.advice == USE:
        return said + ": use the hand-overs on this repository."
    if verdict.advice == PLANS_ONLY:
        return said + f": use them only for plan-style prompts ({verdict.reason})."
    return said + f": not yet — {verdict.reason}."


def _is_plan(text: str) -> bool:
    from habitus.core.tasktext import read_task

    return read_task(text).is_plan


def replay_verdict(run: ReplayRun) -> Verdict | None:
    """The verdict of a finished replay (None when habitus was not among its selectors)."""
    from habitus.bench.replay.metrics import paired_f1

    mine = run.scores.get("habitus")
    if not mine:
        return None
    base = run.scores.get(BASELINE)
    plan_rows = [i for i, task in enumerate(run.tasks) if _is_plan(task.task)]
    gain = paired_f1(mine, base)["low"] if base else None
    counts = {"habitus": Tally.of(mine), "baseline": Tally.of(base) if base else None,
              "plans": Tally.of([mine[i] for i in plan_rows]),
              "plans_baseline": Tally.of([base[i] for i in plan_rows]) if base else None, "f1_gain_low": gain}
    advice, reason = decide(**counts)
    verdict = Verdict(advice=advice, reason=reason, **counts)
    return replace(verdict, sentence=render(verdict))


__all__ = ["NOT_YET", "PLANS_ONLY", "USE", "Tally", "Verdict", "decide", "render", "replay_verdict"]
