"""Pitfalls: detours that recur in a group's runs (or cost many tokens), each with a precise trigger.

A pitfall's text is written by habitus from what the sessions ran (the failing command and the one
that fixed it); the failing call's output is kept apart as evidence (`evidence.output`), shown only
quoted, never as words of the pitfall (docs/architecture.md §2.8). Evidence counts each session once and keeps
the per-session figures its totals are made of. `vet_pitfall` marks whether the text passes the
repo's allowlist (`habitus.core.quarantine`); only a vetted pitfall is shown as an instruction.

A trigger is what a delivery hook can test before the agent acts: on `command`, substrings the
failing command contains (`all`, each at least 5 characters) and ones it lacks (`none`, taken
from the command that fixed it); on `error`, a specific line of the error output. A trigger is
kept only when no successful command of the group's runs fires it and the failing one does.
"""

from __future__ import annotations

import re
from collections import defaultdict

from habitus.core.quarantine import Allowlist, evidence_line, unsupported
from habitus.core.record import Detour, Record
from habitus.core.workflow import Pitfall, Trigger
from habitus.learn.allowlist import record_successes
from habitus.learn.checks import check_key

MIN_TRIGGER = 5
COSTLY_TOKENS = 200_000  # one detour this expensive (context re-read included) is worth a pitfall on its own
MAX_EVIDENCE_SESSIONS = 50  # per-session figures kept with a pitfall (the totals count every session)
OUTPUT_CHARS = 300  # of the failing call's output kept as quoted evidence


def fires(trigger: Trigger, text: str) -> bool:
    """The same whole-word test the delivery hooks apply (`Trigger.fires`), so a kept trigger fires there too."""
    return trigger.fires(text)


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


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"``{text}``"


def _text(d: Detour) -> str:
    """The pitfall in habitus's own words, naming only what the session ran; the tool output stays evidence."""
    if d.on == "command":
        out = f"{_code(d.failing)} fails here"
        return out + (f"; run {_code(d.fixing)} instead." if d.fixing else ".")
    tool, _, target = d.failing.partition(": ")
    what = f"{_code(tool)} on {_code(target)}" if target else _code(d.failing)
    return f"{what} failed" + ("; it worked after fixing the cause." if d.fixing else ".")


def session_key(rec: Record) -> str:
    """The session a record belongs to (its trace when the session is unknown): evidence is counted per session."""
    return rec.session_id or rec.trace_id


def _evidence(items: list[tuple[Record, Detour]], d: Detour) -> dict[str, object]:
    """Sessions, tokens and failures, each with the per-session figures it sums (no session counted twice)."""
    tokens: dict[str, int] = defaultdict(int)
    failures: dict[str, int] = defaultdict(int)
    for rec, detour in items:
        tokens[session_key(rec)] += detour.tokens
        failures[session_key(rec)] += 1
    return {"sessions": len(tokens), "session_ids": sorted(tokens)[:MAX_EVIDENCE_SESSIONS],
            "occurrences": len(items), "tokens_cost": sum(tokens.values()),
            "tokens_by_session": dict(sorted(tokens.items(), key=lambda kv: -kv[1])[:MAX_EVIDENCE_SESSIONS]),
            "failures_by_session": {k: failures[k] for k in sorted(failures)[:MAX_EVIDENCE_SESSIONS]},
            "failing": d.failing, "fixing": d.fixing, "output": evidence_line(d.error, OUTPUT_CHARS)}


def vet_pitfall(pitfall: Pitfall, allowlist: Allowlist) -> Pitfall:
    """Mark whether the pitfall's words may be shown as an instruction (`evidence.vetted`); see `core.quarantine`.

    Its own failing command may be named (the session ran it; the pitfall says not to).
    """
    failing = pitfall.evidence.get("failing")
    also = [failing] if isinstance(failing, str) and pitfall.trigger.on == "command" else []
    pitfall.evidence["vetted"] = unsupported(pitfall.text, allowlist, also=also) is None
    return pitfall


def find_pitfalls(records: list[Record], allowlist: Allowlist | None = None) -> list[Pitfall]:
    """Pitfalls of a group's runs, vetted against `allowlist` (default: the commands these runs ran successfully)."""
    successes = [c.command for r in records for c in r.commands if c.ok]
    allow = allowlist if allowlist is not None else Allowlist.build(record_successes(records))
    groups: dict[str, list[tuple[Record, Detour]]] = defaultdict(list)
    for rec in records:
        for d in rec.detours:
            groups[_detour_key(d)].append((rec, d))
    pitfalls = []
    for items in groups.values():
        sessions = {session_key(rec) for rec, _ in items}
        tokens = sum(d.tokens for _, d in items)
        if len(sessions) < 2 and tokens < COSTLY_TOKENS:
            continue
        # the most common failing form, preferring one with a known fix
        d = sorted((d for _, d in items), key=lambda x: (x.fixing is None, x.failing))[0]
        trigger = _command_trigger(d, successes) if d.on == "command" else None
        trigger = trigger or _error_trigger(d, successes)
        if trigger is None:
            continue
        pitfalls.append(vet_pitfall(Pitfall(text=_text(d), trigger=trigger, evidence=_evidence(items, d)), allow))
    pitfalls.sort(key=lambda p: (-p.evidence["sessions"], -p.evidence["tokens_cost"]))  # type: ignore[operator]
    return pitfalls
