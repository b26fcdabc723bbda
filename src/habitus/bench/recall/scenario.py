"""The recall-benchmark scenario format: a repo history, the sessions learned from, changes after learning, tasks.

A scenario is one JSON or YAML document (`format: 1`):

```yaml
format: 1
name: s0-seed0
fixture: {seed: 0, sessions: 12}          # the fixture repo and the agent sessions memory is learned from
after_learning:                           # real git commits made after learning, before any recall
  - {op: rename, path: web/src/app.ts, to: web/src/application.ts}
  - {op: move, path: docs/api.md, to: reference/api.md}
  - {op: delete, path: docs/config.md}
  - {op: delete, path: scripts/check.sh}
tasks:
  - id: t01
    text: "Add a keyboard shortcut Alt+G for `toggleGrid` ..."
    category: new-task                    # what the case tests (see CATEGORIES)
    expect: [shortcut]                    # task kinds whose workflow should be handed over; [] = nothing
    stale: [docs/config.md]               # files the hand-over must not show as valid (derived when absent)
    moved: {web/src/app.ts: web/src/application.ts}   # where steps at moved files should point
```

Expected workflows are named by task kind (the fixture's `shortcut`, `endpoint`, `config`): the
runner maps each kind to the workflow learned from that kind's sessions. `stale` and `moved` are
derived from `after_learning` and the expected kinds' files when left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1
OPS = ("rename", "move", "delete")
CATEGORIES = ("new-task", "docs-only", "review-only", "question", "negation", "look-alike", "multi-change",
              "nothing")
ADVERSARIAL = ("docs-only", "review-only", "question", "negation", "look-alike", "nothing")


class ScenarioError(ValueError):
    """A scenario document is malformed; the message names the field."""


@dataclass
class Change:
    """One change committed after learning: rename/move `path` to `to`, or delete `path`."""

    op: str
    path: str
    to: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "path": self.path, **({"to": self.to} if self.to else {})}


@dataclass
class TaskSpec:
    """A task given to recall after learning, with what a good hand-over contains."""

    id: str
    text: str
    category: str
    expect: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    moved: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "text": self.text, "category": self.category,
                               "expect": list(self.expect)}
        if self.stale:
            out["stale"] = list(self.stale)
        if self.moved:
            out["moved"] = dict(self.moved)
        return out


@dataclass
class Scenario:
    name: str
    seed: int = 0
    sessions: int = 12
    after_learning: list[Change] = field(default_factory=list)
    tasks: list[TaskSpec] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "name": self.name, "fixture": {"seed": self.seed, "sessions": self.sessions},
                "after_learning": [c.to_dict() for c in self.after_learning],
                "tasks": [t.to_dict() for t in self.tasks]}

    @property
    def moves(self) -> dict[str, str]:
        return {c.path: c.to for c in self.after_learning if c.op in ("rename", "move") and c.to}

    @property
    def deleted(self) -> list[str]:
        return [c.path for c in self.after_learning if c.op == "delete"]


def _req(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in data:
        raise ScenarioError(f"{where}: missing {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise ScenarioError(f"{where}: {key!r} must be {kind.__name__}, got {type(value).__name__}")
    return value


def scenario_from_dict(data: Any) -> Scenario:
    """A Scenario from its parsed document; ScenarioError on anything malformed."""
    if not isinstance(data, dict):
        raise ScenarioError("a scenario must be a mapping")
    if data.get("format", FORMAT) != FORMAT:
        raise ScenarioError(f"unsupported scenario format {data.get('format')!r} (expected {FORMAT})")
    name = str(_req(data, "name", str, "scenario"))
    fixture = data.get("fixture") or {}
    if not isinstance(fixture, dict):
        raise ScenarioError(f"{name}: 'fixture' must be a mapping")
    changes = []
    for i, c in enumerate(data.get("after_learning") or []):
        where = f"{name}: after_learning[{i}]"
        if not isinstance(c, dict):
            raise ScenarioError(f"{where} must be a mapping")
        op = _req(c, "op", str, where)
        if op not in OPS:
            raise ScenarioError(f"{where}: op must be one of {', '.join(OPS)}, got {op!r}")
        to = c.get("to")
        if op != "delete" and not isinstance(to, str):
            raise ScenarioError(f"{where}: {op} needs 'to'")
        changes.append(Change(op=op, path=str(_req(c, "path", str, where)), to=to if op != "delete" else None))
    tasks = []
    for i, t in enumerate(_req(data, "tasks", list, name)):
        where = f"{name}: tasks[{i}]"
        if not isinstance(t, dict):
            raise ScenarioError(f"{where} must be a mapping")
        category = str(t.get("category") or "new-task")
        if category not in CATEGORIES:
            raise ScenarioError(f"{where}: unknown category {category!r} (one of {', '.join(CATEGORIES)})")
        expect = t.get("expect") or []
        if not isinstance(expect, list):
            raise ScenarioError(f"{where}: 'expect' must be a list of task kinds")
        moved = t.get("moved") or {}
        if not isinstance(moved, dict):
            raise ScenarioError(f"{where}: 'moved' must be a mapping old path → new path")
        tasks.append(TaskSpec(id=str(t.get("id") or f"t{i + 1:02d}"), text=str(_req(t, "text", str, where)),
                              category=category, expect=[str(k) for k in expect],
                              stale=[str(s) for s in t.get("stale") or []],
                              moved={str(k): str(v) for k, v in moved.items()}))
    return Scenario(name=name, seed=int(fixture.get("seed", 0)), sessions=int(fixture.get("sessions", 12)),
                    after_learning=changes, tasks=tasks)


def load_scenario(path: Path | str) -> Scenario:
    """Read a scenario file (.json, or .yaml/.yml)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (ValueError, ImportError) as exc:
        raise ScenarioError(f"{path} is not valid {path.suffix.lstrip('.') or 'json'}: {exc}") from exc
    return scenario_from_dict(data)


def dump_scenario(scenario: Scenario, path: Path | str) -> Path:
    """Write a scenario as JSON or YAML (by suffix); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix in (".yaml", ".yml"):
        import yaml

        text = yaml.safe_dump(scenario.to_dict(), sort_keys=False, allow_unicode=True, width=120)
    else:
        text = json.dumps(scenario.to_dict(), indent=2, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return path
