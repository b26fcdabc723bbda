"""Records: the model-free facts of one coding trace (issue "Procedural memory" §1).

Walks a trace's tool calls in order, keeping a view of each file's text (from reads, writes and
applied edits; else from the repo at the session's commit or HEAD) so every edit gets its place.
Edits come from Edit / MultiEdit / Write (Claude Code), `apply_patch` (Codex, as a tool or through
the shell). Shell commands keep their exit status; checks and detours are derived from them.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from habitus.capture.worktree import read_tree_text
from habitus.core.commands import file_shown, last_command_words
from habitus.core.patch import parse_apply_patch
from habitus.core.paths import recorded_relative, repo_relative
from habitus.core.record import CommandFact, EditFact, Record
from habitus.core.tools import EDIT_TOOLS, READ_TOOLS, WRITE_TOOLS, shell_command, tool_path
from habitus.core.trace import ToolCall, Trace
from habitus.core.untrusted import sanitise
from habitus.learn.checks import last_passing_checks
from habitus.learn.commits import session_commits
from habitus.learn.detours import find_detours
from habitus.learn.places import edit_places
from habitus.learn.shelldir import next_shell_dir

_READ_LINE = re.compile(r"^\s*(\d+)[\u2192\t](.*)$")
_SHELL_PATH = re.compile(r"[\w./-]+")  # a plain path (no globs, variables or substitutions)


def _rel(path: str, root: str | None) -> str:
    """The repo-relative form of a path a tool named, or "" when it is not a file of the repo (outside it,
    `..`, inside `.git`): such files are neither places nor reads memory may keep. Paths of a session recorded
    on Windows (`D:\\repo\\src\\a.go`, `D:/repo/src/a.go`, `/d/repo/src/a.go`) map onto the repo like POSIX ones."""
    rel = recorded_relative(path, root)
    return repo_relative(rel) or "" if rel else ""


class _Files:
    """What is known of each file's text while walking a trace."""

    def __init__(self, repo: Path | None, commit: str | None) -> None:
        self.text: dict[str, str] = {}
        self.repo, self.commit = repo, commit
        self._git_cache: dict[tuple[str, str], str | None] = {}

    def candidates(self, rel: str) -> Iterator[str]:
        """The text of `rel` as tracked from the trace, then at the session's commit, then in the work tree."""
        if rel in self.text:
            yield self.text[rel]
        if self.repo is not None:
            for rev in ([self.commit] if self.commit else []) + ["WORKTREE"]:
                text = self._from_repo(rel, rev)
                if text is not None:
                    yield text

    def _from_repo(self, rel: str, rev: str) -> str | None:
        key = (rel, rev)
        if key not in self._git_cache:
            text = None
            assert self.repo is not None
            if rev == "WORKTREE":
                text = read_tree_text(self.repo, rel)
            else:
                done = subprocess.run(["git", "-C", str(self.repo), "show", f"{rev}:{rel}"], capture_output=True,
                                      text=True, check=False, timeout=10)
                text = done.stdout if done.returncode == 0 else None
            self._git_cache[key] = text
        return self._git_cache[key]


def _read_output_text(output: str) -> str | None:
    """File text from a Claude Code Read result (numbered lines), when it starts at line 1."""
    lines = output.split("\n")
    out, expect = [], 1
    for line in lines:
        m = _READ_LINE.match(line)
        if not m:
            if not line.strip():
                continue
            if out:
                break  # a trailer after the file (Claude Code appends <system-reminder> blocks)
            return None
        if int(m.group(1)) != expect:
            return None
        out.append(m.group(2))
        expect += 1
    return "\n".join(out) + "\n" if out else None


def records_from_trace(trace: Trace, *, repo: Path | None = None) -> list[Record]:
    """One record per task of the trace (`habitus.learn.tasks`): each real prompt with the steps that followed it.

    The first record keeps the trace id; later ones are `<trace id>#<n>`, with `meta.trace` naming the trace."""
    from habitus.learn.tasks import task_traces

    return [record_from_trace(sub, repo=repo) for _, sub in task_traces(trace)]


def trace_repo(trace: Trace) -> Path | None:
    """The local checkout of a trace's repo: its cwd when that is a git repo here, else the repo it was assigned to."""
    for candidate in (trace.cwd, trace.meta.get("repo_path")):
        if candidate and Path(candidate).is_dir() and (Path(candidate) / ".git").exists():
            return Path(candidate)
    return None


def record_from_trace(trace: Trace, *, repo: Path | None = None) -> Record:
    """Learn the facts of one trace; `repo` (default: the trace's cwd when it is a git repo) resolves places."""
    root = trace.cwd
    if repo is None:
        repo = trace_repo(trace)
    commits = [sha for _, sha in session_commits(trace, repo)]  # the commits this task made (its own calls)
    commit = commits[-1] if commits else None  # full hashes: `session_commits` resolves what the call printed
    files = _Files(repo, commit)
    # the task as a person sees it (no escape sequences or hidden characters): cues and names are derived from it
    rec = Record(trace_id=trace.id, subject=trace.subject, task=sanitise(trace.task), session_id=trace.session_id,
                 agent=trace.agent, cwd=trace.cwd, outcome=trace.outcome.status.value, commit=commit,
                 date=trace.ended or trace.started, tokens=trace.usage.total_tokens)
    if trace.git_commits:
        rec.meta["base_commit"] = trace.git_commits[0]
    for key in ("parent_session", "trace"):
        if trace.meta.get(key):
            rec.meta[key] = str(trace.meta[key])
    if trace.meta.get("task_index"):
        rec.meta["task_index"], rec.meta["tasks"] = int(trace.meta["task_index"]), int(trace.meta.get("tasks") or 1)
    if trace.meta.get("repo_path"):
        rec.meta["repo_path"] = str(trace.meta["repo_path"])
    if trace.meta.get("linked_commits"):
        rec.meta["linked_commits"] = list(trace.meta["linked_commits"])
    first_edit_seen = False
    shell_dir = ""  # the folder a persistent shell (Claude Code's Bash) is in
    exists = _folder_test(repo)
    running: dict[str, CommandFact] = {}  # Codex sessions still running, by session id
    for index, step in enumerate(trace.steps):
        call = step.tool
        if call is None:
            continue
        edits: list[EditFact] = []
        command = shell_command(call)
        if call.name == "write_stdin":
            _poll(running, call)
        if command is not None:
            fact = _command_fact(call, command, index, shell_dir, root, exists)
            rec.commands.append(fact)
            if "workdir" not in call.input:
                shell_dir = next_shell_dir(command, shell_dir, root, call.output or "", exists) if call.ok \
                    else shell_dir
            started = _RUNNING.search((call.output or "")[:400])
            if started:
                running[started.group(1)] = fact
            if "apply_patch" in command or "*** Begin Patch" in command:
                edits = _patch_edits(command, files, root, index) if call.ok else []
            elif call.ok and not first_edit_seen:
                shown = file_shown(command)
                rel = _rel(shown, root) if shown and _SHELL_PATH.fullmatch(shown) else ""
                if rel:
                    _note_read(rec, rel)
                    if call.output and not call.output_truncated and _whole_file(command, call.output):
                        files.text.setdefault(rel, call.output)
        elif call.name == "apply_patch" and call.ok:
            edits = _patch_edits(str(call.input.get("input") or call.input.get("patch") or ""), files, root, index)
        elif call.name in READ_TOOLS:
            rel = _rel(tool_path(call.input), root)
            if rel and call.ok:
                if not first_edit_seen:
                    _note_read(rec, rel)
                if call.output and not call.output_truncated and not call.input.get("offset"):
                    text = _read_output_text(call.output)
                    if text is not None and rel not in files.text:
                        files.text[rel] = text
        elif call.name in EDIT_TOOLS and call.ok and call.input.get("command") != "view":
            edits = _tool_edits(call, files, root, index)
            if not edits:  # a file this record cannot place (another machine's path): still an edit for traps
                rec.meta.setdefault("edit_steps", []).append(index)
        if edits:
            first_edit_seen = True
            rec.edits.extend(edits)
    if repo is not None and commits:
        named = _named_by_calls(trace)
        for made in commits:
            rec.edits.extend(_diff_edits(repo, made, set(rec.files_edited), len(trace.steps), named))
    rec.checks = last_passing_checks(rec.commands, root)
    rec.detours = find_detours(trace)
    return rec


def _whole_file(command: str, output: str) -> bool:
    """Whether a shell read printed the whole file (`cat`, or `sed -n '1,Np'` that printed fewer than N lines)."""
    words = last_command_words(command)
    if words and words[0] == "sed":
        script = next((w for w in words[1:] if not w.startswith("-")), "")
        m = re.fullmatch(r"(\d+),(\d+)p", script)
        return bool(m) and m.group(1) == "1" and output.count("\n") < int(m.group(2))
    return bool(words) and words[0] in ("cat", "nl", "less", "more", "bat")


def _note_read(rec: Record, rel: str) -> None:
    if rel not in rec.reads_before_edit:
        rec.reads_before_edit.append(rel)


_RUNNING = re.compile(r"^Process running with session ID (\S+)$", re.MULTILINE)


def _folder_test(repo: Path | None) -> Callable[[str], bool] | None:
    """Whether a repo-relative folder exists in the local checkout (None without one)."""
    if repo is None:
        return None
    return lru_cache(maxsize=256)(lambda rel: (repo / rel).is_dir())


def _command_fact(call: ToolCall, command: str, index: int, shell_dir: str, root: str | None,
                  exists: Callable[[str], bool] | None = None) -> CommandFact:
    """A shell call as a fact: where it ran (Codex's `workdir`, else the persistent shell's folder) and, when it
    failed or printed a runner's failure verdict, what it printed (`habitus.learn.errorlines.error_excerpt`)."""
    from habitus.learn.checks import check_kind_anywhere
    from habitus.learn.errorlines import error_excerpt, has_verdict

    workdir = call.input.get("workdir")
    folder = recorded_relative(str(workdir), root) if isinstance(workdir, str) and workdir else shell_dir
    if folder and exists is not None and not exists(folder):
        folder = ""  # a folder this checkout does not have: the shell was back at the root
    output = call.output or ""
    failed = not call.ok or (check_kind_anywhere(command) is not None and has_verdict(output))
    error = error_excerpt(output) if failed else ""
    return CommandFact(command=command, exit_code=call.exit_code, ok=call.ok, error=error, index=index, dir=folder)


def _poll(running: dict[str, CommandFact], call: ToolCall) -> None:
    """A Codex `write_stdin` poll that saw a running command exit: its output is that command's (the exit code
    was already given to the command when the trace was read)."""
    from habitus.learn.errorlines import error_excerpt, has_verdict

    fact = running.get(str(call.input.get("session_id")))
    if fact is None or call.exit_code is None:
        return
    running.pop(str(call.input.get("session_id")), None)
    output = call.output or ""
    fact.exit_code = call.exit_code
    if call.exit_code != 0 or has_verdict(output):
        fact.ok = False
        fact.error = error_excerpt(output)


def _replace(files: _Files, rel: str, old: str, new: str, tool: str, index: int) -> EditFact:
    for text in files.candidates(rel):
        if old and old in text and new not in text:
            after = text.replace(old, new, 1)
        elif new and new in text:
            after = text  # already applied (the repo view is from after the session)
        else:
            continue
        files.text[rel] = after
        places, added = edit_places(rel, after, new, old)
        return EditFact(file=rel, places=places, added=added, tool=tool, index=index)
    _, added = edit_places(rel, "", new, old)
    return EditFact(file=rel, places=[], added=added, tool=tool, index=index)


def _tool_edits(call: ToolCall, files: _Files, root: str | None, index: int) -> list[EditFact]:
    inp: dict[str, Any] = call.input
    rel = _rel(tool_path(inp), root)
    if not rel:
        return []
    if call.name in WRITE_TOOLS or inp.get("command") == "create":
        content = str(inp.get("content") or inp.get("file_text") or "")
        files.text[rel] = content
        return [EditFact(file=rel, places=[], added=[ln.strip() for ln in content.split("\n") if ln.strip()][:200],
                         tool=call.name, index=index)]
    if isinstance(inp.get("edits"), list):  # MultiEdit, and aider's several blocks for one file
        return [_replace(files, rel, str(e.get("old_string") or ""), str(e.get("new_string") or ""), call.name, index)
                for e in inp.get("edits") or [] if isinstance(e, dict)]
    old = str(inp.get("old_string") or inp.get("old_str") or "")
    new = str(inp.get("new_string") or inp.get("new_str") or "")
    return [_replace(files, rel, old, new, call.name, index)]


def _patch_edits(text: str, files: _Files, root: str | None, index: int) -> list[EditFact]:
    out = []
    for op, path, hunks in parse_apply_patch(text):
        rel = _rel(path, root)
        if not rel:
            continue
        if op == "add":
            content = "\n".join(new for _, new in hunks) + "\n"
            files.text[rel] = content
            out.append(EditFact(file=rel, places=[], added=[ln.strip() for ln in content.split("\n") if ln.strip()],
                                tool="apply_patch", index=index))
        elif op == "update":
            out.extend(_replace(files, rel, old, new, "apply_patch", index) for old, new in hunks)
    return out


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


@lru_cache(maxsize=1024)
def commit_info(repo: Path, commit: str) -> tuple[str | None, tuple[tuple[str, tuple[int, ...], tuple[str, ...]], ...]]:
    """(full hash, [(file, changed line indexes after the commit, added lines)]) in one `git show`; (None, ())
    when the repo does not have the commit."""
    done = subprocess.run(["git", "-C", str(repo), "show", "--format=%H", "-U0", "--no-color", "--no-renames",
                           f"{commit}^{{commit}}", "--"], capture_output=True, text=True, check=False, timeout=20)
    if done.returncode != 0 or not done.stdout.strip():
        return None, ()
    full, _, body = done.stdout.partition("\n")
    out: list[tuple[str, tuple[int, ...], tuple[str, ...]]] = []
    file: str | None = None
    lines: list[int] = []
    added: list[str] = []
    for line in body.split("\n"):
        if line.startswith("+++ "):
            if file:
                out.append((file, tuple(lines), tuple(added)))
            file = line[6:] if line.startswith("+++ b/") else None
            lines, added = [], []
        elif file and line.startswith("@@"):
            m = _HUNK.match(line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) or 1)
                lines.extend(range(start - 1, start - 1 + count) if count else [max(0, start - 1)])
        elif file and line.startswith("+") and line[1:].strip():
            added.append(line[1:].strip())
    if file:
        out.append((file, tuple(lines), tuple(added)))
    return full.strip(), tuple(out)


def _named_by_calls(trace: Trace) -> str:
    """The text of every tool call's input (commands, paths, patches): what the session itself acted on."""
    import json

    return "\n".join(shell_command(c) or json.dumps(c.input, ensure_ascii=False) for c in trace.tool_calls)


def _acted_on(file: str, named: str) -> bool:
    """Whether the session's own calls name `file` (its path, or its file name as a whole word)."""
    if file in named:
        return True
    base = re.escape(file.rsplit("/", 1)[-1])
    return re.search(rf"(?<![\w.-]){base}(?![\w-])", named) is not None


def _diff_edits(repo: Path, commit: str, seen: set[str], index: int, named: str | None = None) -> list[EditFact]:
    """Edits the session's commit made that no edit tool shows (files changed through the shell). With `named`
    (the text of the session's calls), only files the session's calls name: a commit of a shared work tree
    (`git add -A`, `commit -a`) also holds other sessions' and the user's changes."""
    from habitus.core.workflow import Place
    from habitus.learn.places import chains_for_lines

    out = []
    for file, lines, added in commit_info(repo, commit)[1]:
        if file in seen or (named is not None and not _acted_on(file, named)):
            continue
        text = _Files(repo, commit)._from_repo(file, commit)
        places = [Place(file=file, chain=c) for c in chains_for_lines(file, text, list(lines))] if text else []
        out.append(EditFact(file=file, places=places, added=list(added)[:200], tool="diff", index=index))
    return out
