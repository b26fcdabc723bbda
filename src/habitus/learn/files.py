"""Workflow files (public contract, `format: 1`): YAML, one workflow per document; import and export.

Export writes each workflow's `to_dict()` (unknown keys included) as its own YAML document.
Import validates every document before anything is stored, so a bad file loses nothing and
changes nothing; unknown keys are kept and written back on export. Imported workflows attach
to the subject of `--repo` (or keep the subject they carry).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from habitus.core.workflow import WORKFLOW_FORMAT, WORKFLOW_STATUSES, Workflow


class WorkflowFileError(ValueError):
    """A workflow file could not be read; the message names the file and document."""


def _yaml():  # noqa: ANN202 - module object
    import yaml

    return yaml


def dump_workflows(workflows: Iterable[Workflow], *, lifecycle: bool = True) -> str:
    """YAML text with one document per workflow. `lifecycle=False` leaves out status and counters."""
    yaml = _yaml()
    docs = []
    for wf in workflows:
        data = wf.to_dict()
        if not lifecycle:
            for key in ("status", "counters"):
                data.pop(key, None)
        data.pop("status_reason", None)
        docs.append(data)
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True, width=120, explicit_start=True)


def parse_workflows(text: str, *, source: str = "<text>") -> list[Workflow]:
    """Workflows from YAML text; raises WorkflowFileError naming the document at fault."""
    yaml = _yaml()
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise WorkflowFileError(f"{source}: not valid YAML ({str(exc).splitlines()[0]})") from exc
    out = []
    seen: set[str] = set()
    for n, doc in enumerate(docs, 1):
        out.append(_validate(doc, f"{source} document {n}"))
        if out[-1].id in seen:
            raise WorkflowFileError(f"{source} document {n}: duplicate workflow id {out[-1].id!r}")
        seen.add(out[-1].id)
    if not out:
        raise WorkflowFileError(f"{source}: no workflow documents")
    return out


def _validate(doc: Any, where: str) -> Workflow:
    if not isinstance(doc, dict):
        raise WorkflowFileError(f"{where}: a workflow must be a mapping, got {type(doc).__name__}")
    fmt = doc.get("format", WORKFLOW_FORMAT)
    if not isinstance(fmt, int) or fmt < 1:
        raise WorkflowFileError(f"{where}: `format` must be a positive integer")
    if doc.get("intent", "change") not in ("change", "inspect"):
        raise WorkflowFileError(f"{where}: `intent` must be change or inspect")
    if doc.get("status", "active") not in WORKFLOW_STATUSES:
        raise WorkflowFileError(f"{where}: `status` must be one of {', '.join(WORKFLOW_STATUSES)}")
    for key in ("steps", "checks", "pitfalls", "blanks", "fills"):
        if key in doc and doc[key] is not None and not isinstance(doc[key], list):
            raise WorkflowFileError(f"{where}: `{key}` must be a list")
    for i, step in enumerate(doc.get("steps") or [], 1):
        if not isinstance(step, dict) or not isinstance(step.get("do", ""), str):
            raise WorkflowFileError(f"{where}: step {i} must be a mapping with a `do` text")
        place = step.get("place")
        if place is not None and (not isinstance(place, dict) or not place.get("file")):
            raise WorkflowFileError(f"{where}: step {i} `place` needs a `file`")
    for i, fill in enumerate(doc.get("fills") or [], 1):
        if not isinstance(fill, dict) or "blank" not in fill:
            raise WorkflowFileError(f"{where}: fill {i} needs a `blank`")
        if fill.get("from", "code") not in ("code", "quoted", "key", "key-letter", "after"):
            raise WorkflowFileError(f"{where}: fill {i} `from` must be code, quoted, key, key-letter or after")
    try:
        return Workflow.from_dict(doc)
    except (ValueError, TypeError, KeyError) as exc:
        raise WorkflowFileError(f"{where}: {exc}") from exc


def read_workflow_file(path: Path | str) -> list[Workflow]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowFileError(f"cannot read {path}: {exc}") from exc
    return parse_workflows(text, source=str(path))


def import_file(conn: sqlite3.Connection, path: Path | str, *, subject: str | None) -> list[Workflow]:
    """Validate every document of `path`, then store them all (attached to `subject`) in one transaction."""
    from habitus.store.memory import import_workflows

    workflows = read_workflow_file(path)
    if subject is None and any(w.subject is None for w in workflows):
        raise WorkflowFileError(f"{path}: workflows without a `subject` need --repo to say which repo they are for")
    import_workflows(conn, subject, workflows)
    return workflows


def export_file(workflows: list[Workflow], path: Path | str | None, *, lifecycle: bool = True) -> str:
    """Write workflows as YAML to `path` (atomically) or return the text when `path` is None."""
    text = dump_workflows(workflows, lifecycle=lifecycle)
    if path is not None:
        target = Path(path)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    return text
