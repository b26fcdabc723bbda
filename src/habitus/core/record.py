"""The record: model-free facts learned from one coding trace (what was edited where, how it was checked).

A record is what workflow induction consumes: files edited with the *place* of each edit, files
read before the first edit, shell commands with exit status, checks in their last passing form,
detours (a failing call, the later call that fixed it, tokens in between) and the outcome.
Pure data and (de)serialization; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from habitus.core.workflow import Place


@dataclass
class EditFact:
    """One edit: the file, the places it touched (outermost block first) and the lines it added."""

    file: str  # path relative to the repo root when known
    places: list[Place] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # added/changed lines (for blanks and fills)
    tool: str = ""  # Edit | MultiEdit | Write | apply_patch | diff
    index: int = 0  # position of the call in the trace (edit order)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "places": [p.to_dict() for p in self.places], "added": list(self.added),
                "tool": self.tool, "index": self.index}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EditFact:
        places = [Place.from_dict(p) for p in data.get("places") or []]
        return cls(file=str(data["file"]), places=[p for p in places if p is not None],
                   added=[str(x) for x in data.get("added") or []], tool=str(data.get("tool", "")),
                   index=int(data.get("index", 0)))


@dataclass
class CommandFact:
    """A shell command the agent ran, with its exit status (None: unknown), the folder of the repo it ran in and
    what it printed when it failed (or printed a test runner's failure verdict that a pipe kept from the status)."""

    command: str
    exit_code: int | None = None
    ok: bool = True
    error: str = ""  # the output's head and surest error lines when the call failed (`learn.errorlines`)
    index: int = 0
    dir: str | None = ""  # repo-relative folder it started in ("" the root; None outside the repo or unknown)

    def to_dict(self) -> dict[str, Any]:
        return {"command": self.command, "exit_code": self.exit_code, "ok": self.ok, "error": self.error,
                "index": self.index, "dir": self.dir}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CommandFact:
        folder = data.get("dir", "")
        return cls(command=str(data["command"]), exit_code=data.get("exit_code"), ok=bool(data.get("ok", True)),
                   error=str(data.get("error") or ""), index=int(data.get("index", 0)),
                   dir=str(folder) if folder is not None else None)


@dataclass
class Detour:
    """A failing call, the later call that fixed it, and the tokens spent in between."""

    failing: str  # the failing command (or "<tool>: <input>")
    fixing: str | None  # the later call that succeeded where it failed; None: never fixed
    tokens: int = 0
    error: str = ""  # first lines of the error output
    on: str = "command"  # command | edit | error

    def to_dict(self) -> dict[str, Any]:
        return {"failing": self.failing, "fixing": self.fixing, "tokens": self.tokens, "error": self.error,
                "on": self.on}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Detour:
        return cls(failing=str(data["failing"]), fixing=data.get("fixing"), tokens=int(data.get("tokens", 0)),
                   error=str(data.get("error") or ""), on=str(data.get("on") or "command"))


@dataclass
class Record:
    """Per-trace learned facts (issue "Procedural memory" §1)."""

    trace_id: str
    subject: str | None = None
    task: str = ""
    session_id: str | None = None
    agent: str = ""
    cwd: str | None = None
    edits: list[EditFact] = field(default_factory=list)
    reads_before_edit: list[str] = field(default_factory=list)
    commands: list[CommandFact] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)  # in last passing form, first-run order
    detours: list[Detour] = field(default_factory=list)
    outcome: str = "unknown"  # success | failure | unknown
    commit: str | None = None
    date: str | None = None
    tokens: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def files_edited(self) -> list[str]:
        seen: dict[str, None] = {}
        for e in self.edits:
            seen.setdefault(e.file, None)
        return list(seen)

    @property
    def places(self) -> list[Place]:
        """Edited places in first-edit order, without repeats."""
        out: list[Place] = []
        keys: set[tuple[str, tuple[str, ...]]] = set()
        for e in sorted(self.edits, key=lambda x: x.index):
            for p in e.places or [Place(file=e.file)]:
                key = (p.file, tuple(p.chain))
                if key not in keys:
                    keys.add(key)
                    out.append(p)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "subject": self.subject,
            "task": self.task,
            "session_id": self.session_id,
            "agent": self.agent,
            "cwd": self.cwd,
            "edits": [e.to_dict() for e in self.edits],
            "reads_before_edit": list(self.reads_before_edit),
            "commands": [c.to_dict() for c in self.commands],
            "checks": list(self.checks),
            "detours": [d.to_dict() for d in self.detours],
            "outcome": self.outcome,
            "commit": self.commit,
            "date": self.date,
            "tokens": self.tokens,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        return cls(
            trace_id=str(data["trace_id"]),
            subject=data.get("subject"),
            task=str(data.get("task") or ""),
            session_id=data.get("session_id"),
            agent=str(data.get("agent") or ""),
            cwd=data.get("cwd"),
            edits=[EditFact.from_dict(e) for e in data.get("edits") or []],
            reads_before_edit=[str(x) for x in data.get("reads_before_edit") or []],
            commands=[CommandFact.from_dict(c) for c in data.get("commands") or []],
            checks=[str(c) for c in data.get("checks") or []],
            detours=[Detour.from_dict(d) for d in data.get("detours") or []],
            outcome=str(data.get("outcome") or "unknown"),
            commit=data.get("commit"),
            date=data.get("date"),
            tokens=int(data.get("tokens", 0) or 0),
            meta=dict(data.get("meta") or {}),
        )
