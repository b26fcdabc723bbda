"""Pitfalls: the traps of a group's runs (`habitus.learn.traps`), each with a precise trigger a hook can test.

A pitfall is a trap — a failure of a check that recurred in ≥ 2 of the group's tasks with the same causal fix
(another form of the check, or a command run first), never a red-green loop, a tool-protocol error or a one-off —
worded by habitus from what the sessions *ran* (`trap_sentence`); the failing call's error line is kept apart as
evidence (`evidence.output`), shown only quoted, never as words of the pitfall (docs/architecture.md §2.8).
Evidence counts distinct tasks and sessions and names the tasks (`evidence.task_ids`). `vet_pitfall` marks whether
the text passes the repo's allowlist (`habitus.core.quarantine`); only a vetted pitfall is shown as an instruction.

A trigger is what a delivery hook can test before the agent acts: on `command`, substrings the
failing command contains (`all`, each at least 5 characters) and ones it lacks (`none`, taken
from the command that fixed it). A trigger is kept only when no successful command of the group's runs fires it
and the failing one does.
"""

from __future__ import annotations

import re

from habitus.core.quarantine import Allowlist, evidence_line, unsupported
from habitus.core.record import Detour, Record
from habitus.core.workflow import Pitfall, Trigger
from habitus.learn.allowlist import record_successes

MIN_TRIGGER = 5
OUTPUT_CHARS = 300  # of the failing call's output kept as quoted evidence


def fires(trigger: Trigger, text: str) -> bool:
    """The same whole-word test the delivery hooks apply (`Trigger.fires`), so a kept trigger fires there too."""
    return trigger.fires(text)


def _command_trigger(d: Detour, successes: list[str]) -> Trigger | None:
    words = d.failing.split()
    none = []
    if d.fixing:
        failing_words = set(words)
        none = [w for w in d.fixing.split() if w not in failing_words and len(w.strip("-")) >= 3
                and not w.startswith(("'", '"'))][:3]
    for k in range(1, len(words) + 1):
        prefix = " ".join(words[:k])
        if len(prefix) < MIN_TRIGGER:
            continue
        for trig in (Trigger(on="command", all=[prefix], none=[]), Trigger(on="command", all=[prefix], none=none)):
            if fires(trig, d.failing) and not any(fires(trig, s) for s in successes):
                return trig
    return None


def _error_trigger(error: str, successes: list[str]) -> Trigger | None:
    """A trigger on the failure's error line (a trap whose check passed later in the same form: the command alone
    cannot tell the failing run from the passing one)."""
    text = re.sub(r"^(?:E\s+|Error:\s*)", "", error.strip())
    if MIN_TRIGGER <= len(text) <= 120 and not any(text.lower() in s.lower() for s in successes):
        return Trigger(on="error", all=[text], none=[])
    return None


def session_key(rec: Record) -> str:
    """The session a record belongs to (its trace when the session is unknown): evidence is counted per session."""
    return rec.session_id or rec.trace_id


def vet_pitfall(pitfall: Pitfall, allowlist: Allowlist) -> Pitfall:
    """Mark whether the pitfall's words may be shown as an instruction (`evidence.vetted`); see `core.quarantine`.

    Its own failing command may be named (the session ran it; the pitfall says not to).
    """
    failing = pitfall.evidence.get("failing")
    also = [failing] if isinstance(failing, str) and pitfall.trigger.on == "command" else []
    pitfall.evidence["vetted"] = unsupported(pitfall.text, allowlist, also=also) is None
    return pitfall


def find_pitfalls(records: list[Record], allowlist: Allowlist | None = None) -> list[Pitfall]:
    """Pitfalls of a group's runs: their traps, vetted against `allowlist` (default: what these runs ran
    successfully)."""
    from habitus.learn.traps import learn_traps, trap_sentence

    successes = [c.command for r in records for c in r.commands if c.ok]
    allow = allowlist if allowlist is not None else Allowlist.build(record_successes(records))
    pitfalls = []
    for trap in learn_traps(records):
        failing = Detour(failing=trap.failing, fixing=trap.fixing)
        trigger = _command_trigger(failing, successes) or _error_trigger(trap.error, successes)
        if trigger is None:
            continue
        evidence = {"sessions": trap.sessions, "tasks": trap.tasks, "task_ids": list(trap.evidence),
                    "occurrences": trap.tasks, "failures": trap.tasks, "failing": trap.failing, "fixing": trap.fixing,
                    "fix_kind": trap.fix_kind, "check": trap.check, "output": evidence_line(trap.error, OUTPUT_CHARS)}
        pitfalls.append(vet_pitfall(Pitfall(text=trap_sentence(trap), trigger=trigger, evidence=evidence), allow))
    return pitfalls
