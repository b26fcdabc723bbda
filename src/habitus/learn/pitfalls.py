"""Pitfalls: detours that recur in a group's runs (or cost many tokens), each with a precise trigger.

A trigger is what a delivery hook can test before the agent acts: on `command`, substrings the
failing command contains (`all`, each at least 5 characters) and ones it lacks (`none`, taken
from the command that fixed it); on `error`, a specific line of the error output. A trigger is
kept only when no successful command of the group's runs fires it and the failing one does.
"""

from __future__ import annotations

import re
from collections import defaultdict

from habitus.core.record import Detour, Record
from habitus.core.workflow import Pitfall, Trigger
from habitus.learn.checks import check_key

MIN_TRIGGER = 5
COSTLY_TOKENS = 200_000  # one detour this expensive (context re-read included) is worth a pitfall on its own


def fires(trigger: Trigger, text: str) -> bool:
    folded = " ".join(text.split()).lower()
    return all(a.lower() in folded for a in trigger.all) and not any(x.lower() in folded for x in trigger.none)


def _detour_key(d: Detour) -> str:
    if d.on == "command":
        key = check_key(d.failing)
        return f"cmd:{key}" if key else "cmd:" + " ".join(d.failing.split()[:2])
    return f"{d.on}:{d.error.splitlines()[0] if d.error else d.failing}"


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


def _error_trigger(d: Detour, successes: list[str]) -> Trigger | None:
    for line in d.error.splitlines():
        text = re.sub(r"^(?:E\s+|Error:\s*)", "", line.strip())
        if len(text) >= MIN_TRIGGER and len(text) <= 120 and not any(text.lower() in s.lower() for s in successes):
            return Trigger(on="error", all=[text], none=[])
    return None


def _text(d: Detour, runs: int) -> str:
    first_error = next((ln.strip() for ln in d.error.splitlines() if ln.strip()), "")
    if d.on == "command":
        out = f"`{d.failing}` fails"
        if first_error:
            out += f" ({first_error[:120]})"
        if d.fixing:
            out += f"; run `{d.fixing}` instead"
    else:
        out = f"{d.failing} failed"
        if first_error:
            out += f": {first_error[:120]}"
        if d.fixing:
            out += "; it worked after fixing the cause"
    return out + "."


def find_pitfalls(records: list[Record]) -> list[Pitfall]:
    successes = [c.command for r in records for c in r.commands if c.ok]
    groups: dict[str, list[tuple[Record, Detour]]] = defaultdict(list)
    for rec in records:
        for d in rec.detours:
            groups[_detour_key(d)].append((rec, d))
    pitfalls = []
    for items in groups.values():
        sessions = {rec.trace_id for rec, _ in items}
        tokens = sum(d.tokens for _, d in items)
        if len(sessions) < 2 and tokens < COSTLY_TOKENS:
            continue
        # the most common failing form, preferring one with a known fix
        d = sorted((d for _, d in items), key=lambda x: (x.fixing is None, x.failing))[0]
        trigger = _command_trigger(d, successes) if d.on == "command" else None
        trigger = trigger or _error_trigger(d, successes)
        if trigger is None:
            continue
        pitfalls.append(Pitfall(text=_text(d, len(sessions)), trigger=trigger,
                                evidence={"sessions": len(sessions), "occurrences": len(items),
                                          "tokens_cost": tokens}))
    pitfalls.sort(key=lambda p: (-p.evidence["sessions"], -p.evidence["tokens_cost"]))
    return pitfalls
