"""Workflow files (public contract, `format: 1`): YAML, one workflow per document; import and export.

Export writes each workflow's `to_dict()` (unknown keys included) as its own YAML document.
Import validates every document before anything is stored, so a bad file loses nothing and
changes nothing; unknown keys are kept and written back on export. Imported workflows attach
to the subject of `--repo` (or keep the subject they carry).

A workflow file may come from anyone, so reading one is bounded and checked like any other input:
the file size, the YAML aliases and the size a document expands to are capped (a few hundred bytes
of nested aliases must not become a 352 MB row), every known key must have its type (one clear
line naming the document otherwise), every place must be a repo-relative path that stays in the
work tree (`habitus.core.paths`), and no text may carry injection phrases, managed-block markers or
look-alike characters (`habitus.core.quarantine`). Pitfalls and checks are vetted against the
repo's allowlist on import: what its sessions never ran is shown to agents only as quoted data.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.core.paths import place_problem
from habitus.core.quarantine import structural_problem
from habitus.core.untrusted import sanitise_data
from habitus.core.workflow import WORKFLOW_FORMAT, WORKFLOW_STATUSES, Workflow

if TYPE_CHECKING:
    from habitus.store.db import Connection

MAX_FILE_BYTES = 8_000_000
MAX_ALIASES = 100
MAX_DOCUMENT_NODES = 50_000  # scalars and containers of one document, aliases expanded
MAX_DOCUMENT_CHARS = 2_000_000  # text of one document, aliases expanded
MAX_WORKFLOW_JSON_CHARS = 256_000  # the stored row of one workflow
FILL_SOURCES = ("code", "quoted", "key", "key-letter", "after")
TRIGGER_KINDS = ("command", "edit", "error")
_LIFECYCLE_FLAGS = ("unvetted_checks",)  # computed on import, never read from a file


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
        for key in ("status_reason", *_LIFECYCLE_FLAGS):
            data.pop(key, None)
        docs.append(sanitise_data(data))  # a file a person reviews and commits: nothing hidden in it
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True, width=120, explicit_start=True)


def _bounded_loader(text: str, source: str) -> Any:
    """A safe YAML loader that refuses more than MAX_ALIASES alias uses in the file."""
    yaml = _yaml()

    class BoundedLoader(yaml.SafeLoader):
        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_ALIASES:
                    raise WorkflowFileError(f"{source}: more than {MAX_ALIASES} YAML aliases (`*name`); "
                                            "write the values out")
            return super().compose_node(parent, index)

        def construct_yaml_int(self, node: Any) -> Any:
            try:
                return super().construct_yaml_int(node)
            except ValueError as exc:  # more digits than Python converts (4,300)
                raise WorkflowFileError(f"{source} line {node.start_mark.line + 1}: a number of "
                                        f"{len(str(node.value)):,} characters is too long to read") from exc

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    return BoundedLoader(text)


def _check_expanded_size(doc: Any, where: str) -> None:
    """Walk a document as it expands (aliases included) and stop as soon as it is too large."""
    nodes = chars = 0
    stack = [doc]
    while stack:
        item = stack.pop()
        nodes += 1
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            chars += len(item)
        if nodes > MAX_DOCUMENT_NODES or chars > MAX_DOCUMENT_CHARS:
            raise WorkflowFileError(f"{where}: expands to more than {MAX_DOCUMENT_NODES:,} values or "
                                    f"{MAX_DOCUMENT_CHARS:,} characters (YAML aliases?); a workflow is far smaller")


def parse_workflows(text: str, *, source: str = "<text>") -> list[Workflow]:
    """Workflows from YAML text; raises WorkflowFileError naming the document at fault."""
    yaml = _yaml()
    if len(text) > MAX_FILE_BYTES:
        raise WorkflowFileError(f"{source}: larger than {MAX_FILE_BYTES:,} characters; not a workflow file")
    loader = _bounded_loader(text, source)
    try:
        docs = []
        while loader.check_data():
            doc = loader.get_data()
            if doc is not None:
                _check_expanded_size(doc, f"{source} document {len(docs) + 1}")
                docs.append(doc)
    except yaml.YAMLError as exc:
        raise WorkflowFileError(f"{source}: not valid YAML ({str(exc).splitlines()[0]})") from exc
    except RecursionError as exc:
        raise WorkflowFileError(f"{source}: nested too deeply to be a workflow file") from exc
    finally:
        loader.dispose()
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


# --- type checks: one line naming the document and the key ------------------------------------------------


def _text(value: Any, what: str, where: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if not isinstance(value, str):
        raise WorkflowFileError(f"{where}: {what} must be text, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return "nothing" if value is None else {dict: "a mapping", list: "a list", bool: "true/false"}.get(
        type(value), type(value).__name__)


def _texts(value: Any, what: str, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WorkflowFileError(f"{where}: {what} must be a list of texts, got {_kind(value)}")
    return [_text(v, f"each of {what}", where) or "" for v in value]


def _mapping(value: Any, what: str, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise WorkflowFileError(f"{where}: {what} must be a mapping, got {_kind(value)}")
    return value


def _records(value: Any, what: str, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WorkflowFileError(f"{where}: `{what}` must be a list")
    return [_mapping(v, f"{what} {i}", where) for i, v in enumerate(value, 1)]


def _count(value: Any, what: str, where: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise WorkflowFileError(f"{where}: {what} must be a whole number of at least {minimum}")
    return value


def _check_types(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """A copy of `doc` whose known keys all have their types (dates become ISO text), or an error."""
    doc = dict(doc)
    fmt = doc.get("format", WORKFLOW_FORMAT)
    if isinstance(fmt, bool) or not isinstance(fmt, int) or fmt < 1:
        raise WorkflowFileError(f"{where}: `format` must be a positive integer")
    if "id" not in doc or "name" not in doc:
        raise WorkflowFileError(f"{where}: a workflow needs at least `id` and `name`")
    for key in ("id", "name"):
        if not _text(doc[key], f"`{key}`", where):
            raise WorkflowFileError(f"{where}: `{key}` must not be empty")
    for key in ("use_when", "subject"):
        _text(doc.get(key), f"`{key}`", where, optional=True)
    for key in ("only_if_asked", "single_run"):
        if not isinstance(doc.get(key, False), bool):
            raise WorkflowFileError(f"{where}: `{key}` must be true or false")
    if doc.get("intent", "change") not in ("change", "inspect"):
        raise WorkflowFileError(f"{where}: `intent` must be change or inspect")
    if doc.get("status", "active") not in WORKFLOW_STATUSES:
        raise WorkflowFileError(f"{where}: `status` must be one of {', '.join(WORKFLOW_STATUSES)}")
    cues = _mapping(doc.get("cues"), "`cues`", where)
    _texts(cues.get("any"), "`cues.any`", where)
    _texts(cues.get("none"), "`cues.none`", where)
    for i, sc in enumerate(_records(cues.get("steps"), "cues.steps", where), 1):
        _count(sc.get("step"), f"cue step {i} `step`", where, minimum=1)
        _texts(sc.get("any"), f"cue step {i} `any`", where)
        _texts(sc.get("none"), f"cue step {i} `none`", where)
    for i, blank in enumerate(_records(doc.get("blanks"), "blanks", where), 1):
        _text(blank.get("name"), f"blank {i} `name`", where)
        _text(blank.get("meaning", ""), f"blank {i} `meaning`", where, optional=True)
    for i, fill in enumerate(_records(doc.get("fills"), "fills", where), 1):
        if "blank" not in fill:
            raise WorkflowFileError(f"{where}: fill {i} needs a `blank`")
        _text(fill["blank"], f"fill {i} `blank`", where)
        if fill.get("from", "code") not in FILL_SOURCES:
            raise WorkflowFileError(f"{where}: fill {i} `from` must be code, quoted, key, key-letter or after")
        _count(fill.get("n", 1), f"fill {i} `n`", where, minimum=1)
        _text(fill.get("phrase"), f"fill {i} `phrase`", where, optional=True)
    for i, step in enumerate(_records(doc.get("steps"), "steps", where), 1):
        if not isinstance(step.get("do", ""), str):
            raise WorkflowFileError(f"{where}: step {i} must be a mapping with a `do` text")
        _text(step.get("when"), f"step {i} `when`", where, optional=True)
        place = step.get("place")
        if place is not None:
            if not isinstance(place, dict) or not place.get("file"):
                raise WorkflowFileError(f"{where}: step {i} `place` needs a `file`")
            _text(place["file"], f"step {i} `place.file`", where)
            problem = place_problem(place["file"])
            if problem:
                raise WorkflowFileError(f"{where}: step {i} `place.file` is {problem} ({place['file']!r}); "
                                        "a place is a path inside the repository")
            _texts(place.get("chain"), f"step {i} `place.chain`", where)
    _texts(doc.get("checks"), "`checks`", where)
    for i, pit in enumerate(_records(doc.get("pitfalls"), "pitfalls", where), 1):
        _text(pit.get("text", ""), f"pitfall {i} `text`", where)
        trigger = _mapping(pit.get("trigger"), f"pitfall {i} `trigger`", where)
        if True in trigger and "on" not in trigger:  # YAML 1.1 reads a bare `on:` key as true
            trigger["on"] = trigger.pop(True)
        if trigger.get("on", "command") not in TRIGGER_KINDS:
            raise WorkflowFileError(f"{where}: pitfall {i} `trigger.on` must be command, edit or error")
        _texts(trigger.get("all"), f"pitfall {i} `trigger.all`", where)
        _texts(trigger.get("none"), f"pitfall {i} `trigger.none`", where)
        _mapping(pit.get("evidence"), f"pitfall {i} `evidence`", where)
    provenance = _mapping(doc.get("provenance"), "`provenance`", where)
    for i, src in enumerate(_records(provenance.get("sources"), "provenance.sources", where), 1):
        _text(src.get("trace"), f"source {i} `trace`", where)
        src["commit"] = _text(src.get("commit"), f"source {i} `commit`", where, optional=True)
        src["date"] = _text(src.get("date"), f"source {i} `date`", where, optional=True)
    provenance["last_verified"] = _text(provenance.get("last_verified"), "`provenance.last_verified`", where,
                                        optional=True)
    for key, value in _mapping(doc.get("counters"), "`counters`", where).items():
        _count(value, f"`counters.{key}`", where)
    return doc


def _check_texts(wf: Workflow, where: str) -> None:
    """No text of an imported workflow may carry injection phrases, managed-block markers or look-alikes."""
    texts = [("`name`", wf.name), ("`use_when`", wf.use_when)]
    texts += [(f"step {i} `do`", s.do) for i, s in enumerate(wf.steps, 1)]
    texts += [(f"step {i} `when`", s.when or "") for i, s in enumerate(wf.steps, 1)]
    texts += [(f"check {i}", c) for i, c in enumerate(wf.checks, 1)]
    texts += [(f"pitfall {i}", p.text) for i, p in enumerate(wf.pitfalls, 1)]
    for what, text in texts:
        problem = structural_problem(text)
        if problem:
            raise WorkflowFileError(f"{where}: {what} is not allowed in a workflow ({problem})")


def _validate(doc: Any, where: str) -> Workflow:
    if not isinstance(doc, dict):
        raise WorkflowFileError(f"{where}: a workflow must be a mapping, got {_kind(doc)}")
    doc = _check_types(doc, where)
    try:
        wf = Workflow.from_dict(doc)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise WorkflowFileError(f"{where}: {exc}") from exc
    for key in _LIFECYCLE_FLAGS:
        wf.extra.pop(key, None)
    try:
        size = len(json.dumps(wf.to_dict(), ensure_ascii=False))
    except (TypeError, ValueError) as exc:  # an unknown key holding a value JSON cannot carry
        raise WorkflowFileError(f"{where}: a value cannot be stored ({exc})") from exc
    if size > MAX_WORKFLOW_JSON_CHARS:
        raise WorkflowFileError(f"{where}: {size:,} characters once stored, more than the {MAX_WORKFLOW_JSON_CHARS:,} "
                                "a workflow may take")
    _check_texts(wf, where)
    return wf


def read_workflow_file(path: Path | str) -> list[Workflow]:
    path = Path(path)
    try:
        if path.is_file() and path.stat().st_size > MAX_FILE_BYTES:
            raise WorkflowFileError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes; not a workflow file")
        with path.open("rb") as fh:
            text = fh.read(MAX_FILE_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowFileError(f"cannot read {path}: {exc}") from exc
    return parse_workflows(text, source=str(path))


def vet_imported(conn: Connection, subject: str | None, workflows: list[Workflow],
                 root: Path | None = None) -> None:
    """Vet imported pitfalls (`evidence.vetted`) and checks (`unvetted_checks`) against the repo's allowlist."""
    from habitus.core.quarantine import unsupported
    from habitus.learn.allowlist import repo_allowlist
    from habitus.learn.pitfalls import vet_pitfall

    allowlists = {}
    for wf in workflows:
        target = subject if subject is not None else wf.subject
        if target not in allowlists:
            allowlists[target] = repo_allowlist(conn, target, root)
        allowlist = allowlists[target]
        for pit in wf.pitfalls:
            for key in ("vetted", "failing"):  # a file cannot vouch for itself
                pit.evidence.pop(key, None)
            vet_pitfall(pit, allowlist)
        unvetted = [c for c in wf.checks if unsupported(f"`{c}`", allowlist) is not None]
        if unvetted:
            wf.extra["unvetted_checks"] = unvetted


@dataclass
class Imported:
    """What an import stored: the workflows (with their stored ids) and the ids it had to derive."""

    workflows: list[Workflow]
    renamed: dict[str, str] = field(default_factory=dict)  # id in the file → stored id

    def to_dict(self, subject: str | None) -> dict[str, Any]:
        return {"imported": [w.id for w in self.workflows], "renamed": dict(self.renamed), "subject": subject}


def import_file(conn: Connection, path: Path | str, *, subject: str | None,
                root: Path | None = None) -> Imported:
    """Validate every document of `path`, then store them all (attached to `subject`) in one transaction.

    An id the import cannot take (a learned workflow's, another repo's) is stored under a derived id
    (`Imported.renamed`); nothing learned or imported before is replaced or reset.
    """
    from habitus.store.memory import import_workflows

    workflows = read_workflow_file(path)
    if subject is None and any(w.subject is None for w in workflows):
        raise WorkflowFileError(f"{path}: workflows without a `subject` need --repo to say which repo they are for")
    vet_imported(conn, subject, workflows, root)
    file_ids = [w.id for w in workflows]
    import_workflows(conn, subject, workflows)
    return Imported(workflows, {old: wf.id for old, wf in zip(file_ids, workflows, strict=True) if old != wf.id})


def export_file(workflows: list[Workflow], path: Path | str | None, *, lifecycle: bool = True) -> str:
    """Write workflows as YAML to `path` (atomically) or return the text when `path` is None."""
    text = dump_workflows(workflows, lifecycle=lifecycle)
    if path is not None:
        target = Path(path)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    return text
