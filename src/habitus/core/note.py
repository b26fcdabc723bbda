"""Notes (decisions, rejected options, conventions, gotchas) and always-on rules, as pure data.

A note is captured from an agent (MCP `note`) or a person (`habitus notes add`), scoped to a repo
(its subject) or global, with a lifecycle: active → archived | superseded (a `supersedes` link on
the newer note). A rule is one entry of the managed always-on block (1–3 short lines) with the
evidence that admitted it. No I/O.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

NOTE_KINDS = ("decision", "rejected", "convention", "gotcha")
NOTE_STATES = ("active", "archived", "superseded")
RULE_STATES = ("promoted", "rejected", "quarantined", "retired")


@dataclass
class Note:
    id: str
    text: str
    kind: str = "convention"
    subject: str | None = None  # None: global
    state: str = "active"
    supersedes: str | None = None
    superseded_by: str | None = None
    reason: str | None = None  # why archived / superseded
    source: str = "user"  # user | agent
    session_id: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)  # optional: sessions, tokens_cost, failures
    created: str = ""
    updated: str = ""
    layer: str = "team"  # team: shared and promotable | personal: stays on the developer's machine
    producer: str | None = None  # pseudonymous member id of who wrote it (habitus.store.share)

    @property
    def title(self) -> str:
        """The one-line title shown by search: the first line, cut to 100 characters."""
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        return first if len(first) <= 100 else first[:99] + "…"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "text": self.text, "kind": self.kind, "subject": self.subject, "state": self.state,
            "supersedes": self.supersedes, "superseded_by": self.superseded_by, "reason": self.reason,
            "source": self.source, "session_id": self.session_id, "evidence": dict(self.evidence),
            "created": self.created, "updated": self.updated, "layer": self.layer, "producer": self.producer,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Note:
        return cls(
            id=str(data["id"]), text=str(data.get("text", "")), kind=str(data.get("kind") or "convention"),
            subject=data.get("subject"), state=str(data.get("state") or "active"),
            supersedes=data.get("supersedes"), superseded_by=data.get("superseded_by"), reason=data.get("reason"),
            source=str(data.get("source") or "user"), session_id=data.get("session_id"),
            evidence=dict(data.get("evidence") or {}), created=str(data.get("created") or ""),
            updated=str(data.get("updated") or ""), layer=str(data.get("layer") or "team"),
            producer=data.get("producer"),
        )


def content_hash(text: str) -> str:
    """Hash of a rule's text with whitespace normalised (how a rule is recognised in the block)."""
    norm = " ".join(text.split()).lower()
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:16]


@dataclass
class Rule:
    """One always-on rule: its lines (1–3), state, and the evidence that admitted it."""

    id: str
    lines: list[str]
    state: str = "promoted"
    evidence: dict[str, Any] = field(default_factory=dict)  # sessions, tokens_cost, failures, sources
    date: str | None = None
    target: str | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def hash(self) -> str:
        return content_hash(self.text)

    def render(self) -> list[str]:
        """The block lines: a bullet, continuation lines indented by two spaces."""
        return [("- " if i == 0 else "  ") + line for i, line in enumerate(self.lines)]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "lines": list(self.lines), "text": self.text, "hash": self.hash, "state": self.state,
                "evidence": dict(self.evidence), "date": self.date, "target": self.target}
