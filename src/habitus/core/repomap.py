"""The repo map and repo conventions: what a repo's history says about where work goes and how it is checked.

- `FileProfile`: one file the history's tasks changed: in how many tasks, the terms of those tasks
  (how many tasks used each), the blocks edited there most, when last, and how often a task that
  named the file changed it.
- `CheckConvention`: a check the repo's tasks run, in its last passing form, with the number of
  tasks that ran it and passed.
- `Trap`: a recurring failure (a command that failed, the error line, what fixed it) with its evidence.
- `RepoMap`: the above for one repo (subject), plus `model`, the weights that turn evidence into the
  chance that a file is where a task's work goes (fitted on the repo's own history, see
  `habitus.learn.calibrate`), and the thresholds recall applies.

Pure data and (de)serialization; no I/O (learn builds it, the store keeps it, recall reads it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

REPOMAP_FORMAT = 2  # 2: the `named_rate` feature is in log-odds (format 1 maps drop its weight until relearned)
MAX_PAST = 2000  # past tasks kept for similarity votes (older ones still count in the file profiles)


@dataclass
class FileProfile:
    tasks: int = 0
    terms: dict[str, int] = field(default_factory=dict)  # term -> tasks whose words held it
    places: dict[str, int] = field(default_factory=dict)  # "block › block" -> tasks that edited there
    last: str = ""
    named: int = 0  # tasks whose text named this file
    named_edited: int = 0  # … and changed it
    examples: list[str] = field(default_factory=list)  # titles of recent tasks that changed it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileProfile:
        # the term and place counts are read as stored (str -> int from our own JSON): recall reads every
        # profile of a repo on each prompt, and converting each entry cost more than the rest of the read
        return cls(tasks=int(data.get("tasks", 0)), terms=dict(data.get("terms") or {}),
                   places=dict(data.get("places") or {}),
                   last=str(data.get("last") or ""), named=int(data.get("named", 0)),
                   named_edited=int(data.get("named_edited", 0)),
                   examples=[str(x) for x in data.get("examples") or []])


@dataclass
class CheckConvention:
    """A check the repo's tasks ran and passed (one identity: folder, kind, program), in its most common whole form.

    `scoped` are its passing forms narrowed to part of the repo (`go test ./internal/x/...`), each with the
    folders it ran on and the tasks that ran it; `template` (`go test ./{}/...`) is set when the history shows the
    check narrowed to the folder of the files a task changed, so recall can narrow it to the files it hands."""

    command: str
    kind: str
    tasks: int = 0  # distinct tasks that ran this check and passed
    last: str = ""
    dir: str = ""  # the folder of the repo it runs in ("" the root)
    scoped: list[dict[str, Any]] = field(default_factory=list)  # {form, paths, tasks}
    template: str | None = None  # `{}` a folder, `{*.mdx}` changed files with that extension
    whole: bool = True  # False: the history only ever ran it narrowed; handed only narrowed by `template`
    areas: dict[str, int] = field(default_factory=dict)  # top folder of a changed file -> tasks that ran this
    evidence: list[str] = field(default_factory=list)  # ids of tasks behind `tasks` (the most recent ones)
    narrowed_from: str | None = None  # recall only: the whole form this hand-over narrowed (never stored)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("narrowed_from", None)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckConvention:
        return cls(command=str(data["command"]), kind=str(data.get("kind") or ""), tasks=int(data.get("tasks", 0)),
                   last=str(data.get("last") or ""), dir=str(data.get("dir") or ""),
                   scoped=[dict(s) for s in data.get("scoped") or [] if isinstance(s, dict)],
                   template=data.get("template") or None, whole=bool(data.get("whole", True)),
                   areas={str(k): int(v) for k, v in (data.get("areas") or {}).items()},
                   evidence=[str(x) for x in data.get("evidence") or []])


@dataclass
class Trap:
    """A recurring failure of a check and the causal fix that made it pass (see `habitus.learn.traps`)."""

    failing: str  # the failing check, as it can run from the repo root
    error: str  # the error line, quoted as data
    fixing: str | None = None  # the fix: the form that passed instead, or the command run first
    tasks: int = 0  # distinct tasks in which exactly this failure was fixed exactly this way
    files: list[str] = field(default_factory=list)  # files those tasks changed (relevance for a hand-over)
    last: str = ""
    check: str = ""  # the check's identity, "folder|kind|program"
    fix_kind: str = "instead"  # instead | first
    sessions: int = 0  # distinct sessions of those tasks
    evidence: list[str] = field(default_factory=list)  # ids of those tasks
    seen: int = 0  # distinct tasks in which the failure was seen at all (however it was fixed)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trap:
        return cls(failing=str(data["failing"]), error=str(data.get("error") or ""), fixing=data.get("fixing"),
                   tasks=int(data.get("tasks", 0)), files=[str(f) for f in data.get("files") or []],
                   last=str(data.get("last") or ""), check=str(data.get("check") or ""),
                   fix_kind=str(data.get("fix_kind") or "instead"), sessions=int(data.get("sessions", 0)),
                   evidence=[str(x) for x in data.get("evidence") or []], seen=int(data.get("seen", 0)))


@dataclass
class PastTask:
    """One past change task as the map keeps it: its terms, the files it changed, its title and date."""

    terms: list[str]
    files: list[str]
    title: str = ""
    date: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"terms": list(self.terms), "files": list(self.files), "title": self.title, "date": self.date}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PastTask:
        # read as stored (our own JSON): a map holds up to MAX_PAST of these and recall reads them all
        return cls(terms=data.get("terms") or [], files=data.get("files") or [], title=data.get("title") or "",
                   date=data.get("date") or "")


@dataclass
class RepoMap:
    subject: str | None = None
    tasks: int = 0  # change tasks learned from
    files: dict[str, FileProfile] = field(default_factory=dict)
    past: list[PastTask] = field(default_factory=list)  # the most recent change tasks (see MAX_PAST)
    checks: list[CheckConvention] = field(default_factory=list)
    checked_tasks: int = 0  # change tasks that ran any check
    traps: list[Trap] = field(default_factory=list)
    model: dict[str, float] = field(default_factory=dict)  # evidence feature -> weight (logistic)
    thresholds: dict[str, float] = field(default_factory=dict)
    calibration: dict[str, Any] = field(default_factory=dict)  # how the model and thresholds were chosen
    built: str = ""
    commit: str | None = None  # the work tree's HEAD when it was built

    def to_dict(self) -> dict[str, Any]:
        return {"format": REPOMAP_FORMAT, "subject": self.subject, "tasks": self.tasks,
                "files": {p: f.to_dict() for p, f in self.files.items()},
                "past": [t.to_dict() for t in self.past],
                "checks": [c.to_dict() for c in self.checks], "checked_tasks": self.checked_tasks,
                "traps": [t.to_dict() for t in self.traps], "model": dict(self.model),
                "thresholds": dict(self.thresholds), "calibration": dict(self.calibration), "built": self.built,
                "commit": self.commit}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RepoMap:
        model = {str(k): float(v) for k, v in (data.get("model") or {}).items()}
        if int(data.get("format") or 1) < 2:
            model.pop("named_rate", None)  # fitted on the old scale of that feature: ignored until relearned
        return cls(subject=data.get("subject"), tasks=int(data.get("tasks", 0)),
                   files={str(p): FileProfile.from_dict(f) for p, f in (data.get("files") or {}).items()},
                   past=[PastTask.from_dict(t) for t in data.get("past") or []],
                   checks=[CheckConvention.from_dict(c) for c in data.get("checks") or []],
                   checked_tasks=int(data.get("checked_tasks", 0)),
                   traps=[Trap.from_dict(t) for t in data.get("traps") or []],
                   model=model,
                   thresholds={str(k): float(v) for k, v in (data.get("thresholds") or {}).items()},
                   calibration=dict(data.get("calibration") or {}), built=str(data.get("built") or ""),
                   commit=data.get("commit"))


__all__ = ["MAX_PAST", "REPOMAP_FORMAT", "CheckConvention", "FileProfile", "PastTask", "RepoMap", "Trap"]
