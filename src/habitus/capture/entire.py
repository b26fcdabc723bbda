"""Sessions stored in git by the `entire` CLI (branch `entire/checkpoints/v1`), linked to their commits.

The `entire` CLI pushes every agent session to a branch of the repo itself: one folder per checkpoint
(`<id[:2]>/<id[2:]>/<n>/`) holding `metadata.json` (session id, creation time, agent), `prompt.txt`
and `full.jsonl`, the agent's own transcript (kept in a session's latest checkpoint only, as a
transcript grows across checkpoints). Each commit a session produced carries an
`Entire-Checkpoint: <12 hex>` trailer. This module reads that branch without checking it out:

- `find_checkpoint_ref(repo)` finds the branch (local or on a remote), for `ingest` and `doctor`;
- `read_entire_sessions(repo)` yields one `EntireSession` per session: its transcript blob, its
  checkpoints, and the commits whose trailer names one of them (oldest first) with the commit the
  session started from (the first parent of the earliest one);
- `ingest_entire_branch(repo, store)` reads each transcript with the ordinary reader (format
  detection, outcome, redaction), assigns it to `repo` (its recorded cwd is another machine's) and
  stores it; an unchanged transcript with unchanged links is skipped.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.capture.ingest import IngestReport
from habitus.store.base import FileState, Store

DEFAULT_BRANCH = "entire/checkpoints/v1"
TRAILER = "Entire-Checkpoint"
GIT_TIMEOUT_S = 120
TRANSCRIPT = "full.jsonl"


class EntireError(ValueError):
    """The repo or its checkpoint branch cannot be read; the message is one line."""


@dataclass
class EntireSession:
    """One session found on the checkpoint branch."""

    session_id: str
    folder: str  # the checkpoint folder holding its latest transcript
    blob: str  # object id of that transcript
    created: str
    checkpoints: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)  # linked by trailer, oldest first
    base_commit: str | None = None  # first parent of the earliest linked commit
    agent: str | None = None


def _git(repo: Path, *args: str, check: bool = True) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False,
                              timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise EntireError(f"git failed in {repo}: {exc}") from exc
    if check and done.returncode != 0:
        raise EntireError(f"git {' '.join(args[:2])} failed in {repo}: {done.stderr.strip().splitlines()[:1]}")
    return done.stdout if done.returncode == 0 else ""


def find_checkpoint_ref(repo: Path | str, branch: str = DEFAULT_BRANCH) -> str | None:
    """The full ref of the checkpoint branch in `repo` (local first, then any remote), or None."""
    candidates = [f"refs/heads/{branch}", branch if branch.startswith("refs/") else ""]
    out = _git(Path(repo), "for-each-ref", "--format=%(refname)", "refs/remotes/", check=False)
    candidates += [ref for ref in out.split() if ref.endswith("/" + branch)]
    for ref in filter(None, candidates):
        if _git(Path(repo), "rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False).strip():
            return ref
    return None


def checkpoint_links(repo: Path) -> dict[str, list[tuple[str, str, str]]]:
    """checkpoint id -> [(commit, first parent, commit date)] for every commit whose trailer names it.

    The checkpoint branch's own commits are left out: they carry transcripts, not code."""
    out = _git(repo, "log", "--exclude=refs/heads/entire/*", "--exclude=refs/remotes/*/entire/*", "--all",
               f"--format=%H%x1f%P%x1f%cI%x1f%(trailers:key={TRAILER},valueonly,separator=%x2C)%x1e", check=False)
    links: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for entry in out.split("\x1e"):
        parts = entry.strip("\n").split("\x1f")
        if len(parts) != 4 or not parts[3].strip():
            continue
        commit, parents, date, ids = parts
        for checkpoint in ids.split(","):
            if checkpoint.strip():
                links[checkpoint.strip()].append((commit, parents.split(" ")[0] if parents else "", date))
    return links


class _Blobs:
    """One `git cat-file --batch` process: blob text by object id."""

    def __init__(self, repo: Path) -> None:
        self.proc = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def read(self, oid: str) -> bytes:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(oid.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return b""
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.read(1)
        return data

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=GIT_TIMEOUT_S)


def _metadata(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def read_entire_sessions(repo: Path | str, ref: str) -> list[EntireSession]:
    """Every session on the checkpoint branch `ref` of `repo` with its transcript, checkpoints and commits."""
    root = Path(repo)
    listing = _git(root, "ls-tree", "-r", ref)
    folders: dict[str, dict[str, str]] = defaultdict(dict)  # "<aa>/<rest>/<n>" -> file name -> blob
    for line in listing.splitlines():
        meta, _, path = line.partition("\t")
        parts = path.split("/")
        if len(parts) == 4 and meta.split()[1:2] == ["blob"]:
            folders["/".join(parts[:3])][parts[3]] = meta.split()[2]
    links = checkpoint_links(root)
    sessions: dict[str, EntireSession] = {}
    blobs = _Blobs(root)
    try:
        for folder in sorted(folders):
            files = folders[folder]
            if "metadata.json" not in files:
                continue
            meta = _metadata(blobs.read(files["metadata.json"]))
            session_id = str(meta.get("session_id") or "")
            checkpoint = str(meta.get("checkpoint_id") or "".join(folder.split("/")[:2]))
            if not session_id:
                continue
            session = sessions.get(session_id)
            created = str(meta.get("created_at") or "")
            if session is None:
                session = sessions[session_id] = EntireSession(session_id=session_id, folder="", blob="", created="")
            if checkpoint not in session.checkpoints:
                session.checkpoints.append(checkpoint)
            if TRANSCRIPT in files and created >= session.created:
                session.folder, session.blob, session.created = folder, files[TRANSCRIPT], created
                session.agent = str(meta.get("agent") or "") or None
    finally:
        blobs.close()
    out = []
    for session in sessions.values():
        if not session.blob:
            continue
        linked = {c: (p, d) for cp in session.checkpoints for c, p, d in links.get(cp, [])}
        ordered = sorted(linked, key=lambda c: (linked[c][1], c))
        session.commits = ordered
        session.base_commit = linked[ordered[0]][0] or None if ordered else None
        out.append(session)
    out.sort(key=lambda s: (s.created, s.session_id))
    return out


def _state_key(root: Path, ref: str, session: EntireSession) -> str:
    return f"git:{root}:{ref}:{session.session_id}"


def _version(session: EntireSession) -> str:
    return hashlib.sha1(json.dumps([session.blob, session.commits, session.checkpoints]).encode()).hexdigest()


def iter_session_traces(root: Path, sessions: list[EntireSession],
                        report: IngestReport) -> Iterator[tuple[EntireSession, Any]]:
    """(session, its traces read from the transcript blob) for each session, read by the ordinary reader."""
    from habitus.capture.reader import read_trace_file

    blobs = _Blobs(root)
    try:
        with tempfile.TemporaryDirectory(prefix="habitus-entire-") as tmp:
            for session in sessions:
                data = blobs.read(session.blob)
                path = Path(tmp) / f"{session.session_id}.jsonl"
                path.write_bytes(data)
                result = read_trace_file(path, subjects=False)
                report.files += 1
                report.bytes_read += len(data)
                report.skipped_lines += result.skipped_lines
                report.unknown_types.update(result.unknown_types)
                report.redactions += result.redactions
                report.errors.extend({"path": f"{session.folder}/{TRANSCRIPT}", "message": e["message"]}
                                     for e in result.errors)
                path.unlink()
                yield session, result.traces
    finally:
        blobs.close()


def ingest_entire_branch(repo: Path | str, store: Store, *, branch: str = DEFAULT_BRANCH) -> IngestReport:
    """Store every session of the checkpoint branch of `repo`, assigned to that repo and linked to its commits."""
    from habitus.capture.assign import assign_to_repo
    from habitus.capture.subject import repo_root, repo_subject

    started = time.perf_counter()
    root = repo_root(repo)
    if root is None:
        raise EntireError(f"{repo} is not a git repository")
    ref = find_checkpoint_ref(root, branch)
    if ref is None:
        raise EntireError(f"no branch {branch} in {root} (fetch it first: git fetch origin {branch}:{branch})")
    subject = repo_subject(root)
    report = IngestReport()
    sessions = read_entire_sessions(root, ref)
    todo = []
    for session in sessions:
        state = store.get_file_state(_state_key(root, ref, session))
        if state is not None and state.head_hash == _version(session):
            report.files_unchanged += 1
        else:
            todo.append(session)
    for session, traces in iter_session_traces(root, todo, report):
        for trace in traces:
            assign_to_repo(trace, root, subject)
            trace.meta["entire"] = {"branch": ref, "checkpoints": list(session.checkpoints),
                                    "folder": session.folder, "base_commit": session.base_commit}
            trace.meta["linked_commits"] = list(session.commits)
            if session.base_commit:
                trace.git_commits = [session.base_commit] + [c for c in trace.git_commits if c != session.base_commit]
        state = FileState(path=_state_key(root, ref, session), size=0, mtime=0.0, offset=0,
                          head_hash=_version(session), format="entire", trace_ids=[t.id for t in traces])
        previous = store.get_file_state(state.path)
        changed = store.commit_file(traces, state, expected_offset=previous.offset if previous else None)
        report.traces += changed or 0
        report.traces_unchanged += len(traces) - (changed or 0)
        report.stored_in.update(store.layer_of(t) for t in traces)
        report.steps += sum(len(t.steps) for t in traces)
        report.tool_calls += sum(len(t.tool_calls) for t in traces)
    report.seconds = time.perf_counter() - started
    return report


__all__ = ["DEFAULT_BRANCH", "EntireError", "EntireSession", "checkpoint_links", "find_checkpoint_ref",
           "ingest_entire_branch", "read_entire_sessions"]
