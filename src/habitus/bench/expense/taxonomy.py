"""The failure taxonomy, classified deterministically from the environment's event log.

Categories (a run may show several; `primary_failure` names the one that explains a failed run):

- `stale_state_duplicate`: an add of a receipt line (amount, date) that appears once on the receipt
  and is already on the form — the agent acted on a state that no longer held;
- `repeated_line_error`: a line that appears several times on the receipt added more times than it
  appears (duplicate), or at least once but fewer times when the agent saved (omission);
- `subcategory_mismapping`: an added line whose amount and date match a receipt line but whose
  subcategory is not that line's;
- `remaining_miscalculation`: an added amount that is on no receipt line of that date (the agent
  computed an amount, e.g. a balancing line for the remainder it believed);
- `tool_error`: a tool or form operation the environment rejected;
- `premature_termination`: the run ended (saved, or stopped without a user model to continue it)
  with remaining ≠ 0.00;
- `turn_limit`: the run used all its turns with remaining ≠ 0.00;
- `aborted`: the agent could not go on (model budget spent, endpoint failing) — not the agent's mistake.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from habitus.bench.expense.env import Event, parse_amount
from habitus.bench.expense.tasks import Task

CATEGORIES = (
    "premature_termination",
    "stale_state_duplicate",
    "repeated_line_error",
    "subcategory_mismapping",
    "remaining_miscalculation",
    "tool_error",
    "turn_limit",
    "aborted",
)
# Which category explains a failed run when several occurred (most direct cause first).
PRIMARY_ORDER = (
    "remaining_miscalculation",
    "stale_state_duplicate",
    "repeated_line_error",
    "premature_termination",
    "turn_limit",
    "tool_error",
    "subcategory_mismapping",
    "aborted",
)


@dataclass(frozen=True)
class Finding:
    category: str
    turn: int | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "turn": self.turn, "detail": self.detail}


def classify(task: Task, log: list[Event], remaining: Decimal, ended_by: str) -> list[Finding]:
    """Every mistake visible in the log, in the order they happened (end-of-run findings last)."""
    want = Counter((line.amount, line.date) for line in task.lines)
    truth: dict[tuple[Decimal, str], set[str]] = {}
    for line in task.lines:
        truth.setdefault((line.amount, line.date), set()).add(line.subcategory)
    form: dict[str, tuple[Decimal, str]] = {}
    have: Counter[tuple[Decimal, str]] = Counter()
    findings: list[Finding] = []
    for ev in log:
        if not ev.ok:
            findings.append(Finding("tool_error", ev.turn, f"{ev.tool}: {ev.error}"))
            continue
        if ev.tool == "remove_itemization_line" and ev.line_id in form:
            have[form.pop(ev.line_id)] -= 1
        if ev.tool != "add_itemization_line" or ev.line_id is None:
            continue
        key = (parse_amount(ev.args.get("amount")), str(ev.args.get("date", "")).strip())
        sub = str(ev.args.get("subcategory", "")).strip()
        form[ev.line_id] = key
        have[key] += 1
        what = f"{sub} {key[0]} on {key[1]}"
        if key not in want:
            findings.append(Finding("remaining_miscalculation", ev.turn, f"added {what}: on no receipt line"))
            continue
        if have[key] > want[key]:
            category = "repeated_line_error" if want[key] > 1 else "stale_state_duplicate"
            findings.append(Finding(category, ev.turn, f"added {what} again ({have[key]} on form, "
                                                       f"{want[key]} on receipt)"))
        if sub not in truth[key]:
            findings.append(Finding("subcategory_mismapping", ev.turn,
                                    f"added {what}; receipt says {'/'.join(sorted(truth[key]))}"))
    for key, n in want.items():
        # An omission: some but not all occurrences added, and the agent saved believing it was done.
        if n > 1 and 0 < have[key] < n and remaining != 0 and ended_by == "save":
            findings.append(Finding("repeated_line_error", None,
                                    f"{key[0]} on {key[1]} appears {n}× on the receipt, {have[key]}× on the form"))
    if remaining != 0:
        if ended_by == "save":
            findings.append(Finding("premature_termination", None, f"saved with remaining {remaining}"))
        elif ended_by in ("budget", "agent_error"):
            findings.append(Finding("aborted", None, f"the agent could not go on ({ended_by}); remaining {remaining}"))
        elif ended_by == "stop":
            findings.append(Finding("premature_termination", None, f"stopped with remaining {remaining}"))
        else:
            findings.append(Finding("turn_limit", None, f"turn limit reached with remaining {remaining}"))
    return findings


def primary_failure(findings: list[Finding], complete: bool) -> str | None:
    """The category that explains a failed run (None for a completed run)."""
    if complete:
        return None
    present = {f.category for f in findings}
    return next((c for c in PRIMARY_ORDER if c in present), "unknown")
