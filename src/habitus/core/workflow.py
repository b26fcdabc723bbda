"""Procedural memory types: a workflow (steps at places, checks, pitfalls, cues, fills) and its parts.

Mirrors the public workflow file format (`format: 1`, one YAML document per workflow, see issue
"Procedural memory" §3). Unknown keys read from a file are kept in `extra` and written back, so
files written by newer versions survive a round trip. Pure data; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

WORKFLOW_FORMAT = 1
WORKFLOW_STATUSES = ("active", "suspended", "archived")


@dataclass
class Place:
    """Where an edit goes: a file and the chain of enclosing blocks (outermost first)."""

    file: str
    chain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "chain": list(self.chain)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Place | None:
        if not data:
            return None
        return cls(file=str(data["file"]), chain=[str(c) for c in data.get("chain") or []])

    def label(self) -> str:
        return " › ".join([self.file, *self.chain])


@dataclass
class WorkflowStep:
    do: str
    place: Place | None = None
    when: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"do": self.do, "place": self.place.to_dict() if self.place else None, "when": self.when}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkflowStep:
        return cls(do=str(data.get("do", "")), place=Place.from_dict(data.get("place")), when=data.get("when"))


@dataclass
class StepCue:
    step: int  # 1-based step number
    any: list[str] = field(default_factory=list)
    none: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "any": list(self.any), "none": list(self.none)}


@dataclass
class Cues:
    any: list[str] = field(default_factory=list)
    none: list[str] = field(default_factory=list)
    steps: list[StepCue] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"any": list(self.any), "none": list(self.none), "steps": [s.to_dict() for s in self.steps]}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Cues:
        data = data or {}
        return cls(
            any=[str(x) for x in data.get("any") or []],
            none=[str(x) for x in data.get("none") or []],
            steps=[StepCue(step=int(s["step"]), any=list(s.get("any") or []), none=list(s.get("none") or []))
                   for s in data.get("steps") or []],
        )


@dataclass
class Blank:
    name: str
    meaning: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "meaning": self.meaning}


@dataclass
class Fill:
    """How to fill a blank from the task text: `from` is code | quoted | key | key-letter | after."""

    blank: str  # "{name}"
    source: str  # serialized as `from`
    n: int = 1
    phrase: str | None = None  # for source == "after"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"blank": self.blank, "from": self.source, "n": self.n}
        if self.phrase is not None:
            out["phrase"] = self.phrase
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fill:
        return cls(blank=str(data["blank"]), source=str(data.get("from", "code")), n=int(data.get("n", 1)),
                   phrase=data.get("phrase"))


_WORD = r"[\w-]"  # a name character: `pytest` is not in `pytest-cov`, `make test` not in `make test-all`


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` (case-insensitive, whitespace folded) as whole words.

    Where the phrase begins or ends with a name character, the text must not continue the name
    there: `pytest` is in `python -m pytest -q` and in `bin/pytest`, not in `pip install pytest-cov`.
    """
    return _phrase_in(_fold(text), phrase)


def _fold(text: str) -> str:
    return " ".join(text.split()).lower()


def _phrase_in(folded: str, phrase: str) -> bool:
    """`contains_phrase` on text already folded by `_fold` (a trigger folds its text once for all phrases)."""
    needle = _fold(phrase)
    if not needle:
        return False
    before = rf"(?<!{_WORD})" if re.match(_WORD, needle[0]) else ""
    after = rf"(?!{_WORD})" if re.match(_WORD, needle[-1]) else ""
    return re.search(before + re.escape(needle) + after, folded) is not None


@dataclass
class Trigger:
    """When a pitfall applies: `on` command | edit | error; all phrases present, none absent (whole words)."""

    on: str = "command"
    all: list[str] = field(default_factory=list)
    none: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"on": self.on, "all": list(self.all), "none": list(self.none)}

    def fires(self, text: str) -> bool:
        """Every `all` phrase is in `text` and no `none` phrase is (a trigger without `all` never fires)."""
        needles = [a for a in self.all if a and a.strip()]
        if not needles:
            return False
        folded = _fold(text)
        return all(_phrase_in(folded, a) for a in needles) and \
            not any(_phrase_in(folded, x) for x in self.none if x and x.strip())


@dataclass
class Pitfall:
    text: str
    trigger: Trigger = field(default_factory=Trigger)
    evidence: dict[str, Any] = field(default_factory=dict)  # sessions, tokens_cost, occurrences

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "trigger": self.trigger.to_dict()}
        if self.evidence:
            out["evidence"] = dict(self.evidence)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pitfall:
        t = data.get("trigger") or {}
        return cls(text=str(data.get("text", "")),
                   trigger=Trigger(on=t.get("on", "command"), all=list(t.get("all") or []),
                                   none=list(t.get("none") or [])),
                   evidence=dict(data.get("evidence") or {}))


@dataclass
class SourceRef:
    trace: str
    commit: str | None = None
    date: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"trace": self.trace, "commit": self.commit, "date": self.date}


@dataclass
class Provenance:
    sources: list[SourceRef] = field(default_factory=list)
    last_verified: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"sources": [s.to_dict() for s in self.sources], "last_verified": self.last_verified}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Provenance:
        data = data or {}
        return cls(sources=[SourceRef(trace=str(s.get("trace")), commit=s.get("commit"), date=s.get("date"))
                            for s in data.get("sources") or []],
                   last_verified=data.get("last_verified"))


@dataclass
class Counters:
    """Lifecycle counters kept by recall and feedback (not part of the file format's required keys)."""

    shown: int = 0
    helped: int = 0
    misled: int = 0
    stale: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"shown": self.shown, "helped": self.helped, "misled": self.misled, "stale": self.stale}


_KNOWN_KEYS = {"format", "id", "name", "use_when", "intent", "only_if_asked", "cues", "blanks", "fills", "steps",
               "checks", "pitfalls", "provenance", "status", "counters", "single_run", "subject"}


@dataclass
class Workflow:
    id: str
    name: str
    use_when: str = ""
    intent: str = "change"  # change | inspect
    only_if_asked: bool = False
    cues: Cues = field(default_factory=Cues)
    blanks: list[Blank] = field(default_factory=list)
    fills: list[Fill] = field(default_factory=list)
    steps: list[WorkflowStep] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    pitfalls: list[Pitfall] = field(default_factory=list)
    provenance: Provenance = field(default_factory=Provenance)
    status: str = "active"
    counters: Counters = field(default_factory=Counters)
    single_run: bool = False  # seeded from one run only
    subject: str | None = None  # the repo this workflow belongs to
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, preserved

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": WORKFLOW_FORMAT,
            "id": self.id,
            "name": self.name,
            "use_when": self.use_when,
            "intent": self.intent,
            "only_if_asked": self.only_if_asked,
            "cues": self.cues.to_dict(),
            "blanks": [b.to_dict() for b in self.blanks],
            "fills": [f.to_dict() for f in self.fills],
            "steps": [s.to_dict() for s in self.steps],
            "checks": list(self.checks),
            "pitfalls": [p.to_dict() for p in self.pitfalls],
            "provenance": self.provenance.to_dict(),
            "status": self.status,
            "counters": self.counters.to_dict(),
            "single_run": self.single_run,
            "subject": self.subject,
        }
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Workflow:
        if "id" not in data or "name" not in data:
            raise ValueError("a workflow needs at least `id` and `name`")
        fmt = data.get("format", WORKFLOW_FORMAT)
        if int(fmt) > WORKFLOW_FORMAT:
            raise ValueError(f"workflow format {fmt} is newer than this habitus understands ({WORKFLOW_FORMAT})")
        counters = data.get("counters") or {}
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            use_when=str(data.get("use_when") or ""),
            intent=str(data.get("intent") or "change"),
            only_if_asked=bool(data.get("only_if_asked", False)),
            cues=Cues.from_dict(data.get("cues")),
            blanks=[Blank(name=str(b["name"]), meaning=str(b.get("meaning", ""))) for b in data.get("blanks") or []],
            fills=[Fill.from_dict(f) for f in data.get("fills") or []],
            steps=[WorkflowStep.from_dict(s) for s in data.get("steps") or []],
            checks=[str(c) for c in data.get("checks") or []],
            pitfalls=[Pitfall.from_dict(p) for p in data.get("pitfalls") or []],
            provenance=Provenance.from_dict(data.get("provenance")),
            status=str(data.get("status") or "active"),
            counters=Counters(**{k: int(counters.get(k, 0)) for k in ("shown", "helped", "misled", "stale")}),
            single_run=bool(data.get("single_run", False)),
            subject=data.get("subject"),
            extra={k: v for k, v in data.items() if k not in _KNOWN_KEYS},
        )
