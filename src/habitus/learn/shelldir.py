"""Which folder of the repo each command of a recorded session ran in.

A check is only the same check in another checkout when it runs in the same folder of the repo:
`cd src && go test ./...` in a repo whose Go module lives in `src/` is not `go test ./...` at the root.
Agents reach that folder in three ways, all followed here:

- a `cd` inside the command line (`cd src && go test ./...`, `cd /d/repo/src && …`, `cd "D:\\repo\\web"; npm test`);
- a shell that keeps its folder between calls (Claude Code's Bash tool: after `cd src && go build ./...` the
  next call's `go test ./color/...` still runs in `src/`; a folder outside the repo sends it back to the root,
  as Claude Code does, and so does its note "Shell cwd was reset to …"). Whether the shell kept its folder
  depends on the version and settings, so when the local checkout is known a relative `cd` that names no folder
  from where the shell was but one from the root (`cd src` run twice, both passing) is read from the root;
- a folder given with the call (Codex `exec_command`'s `workdir`).

Folders are repo-relative (`""` is the root; `habitus.core.paths.recorded_relative` maps absolute paths of the
recording machine, Windows spellings included, onto the recorded root); None means outside the repo or not
knowable (`cd "$TMP"`). Pure functions of the command text.
"""

from __future__ import annotations

from collections.abc import Callable

from habitus.core.paths import recorded_relative
from habitus.core.shell import Command, pipelines

Exists = Callable[[str], bool]


def _enter(current: str | None, target: str, root: str | None, exists: Exists | None = None) -> str | None:
    """The folder after `cd target` from `current` (None: outside the repo or unknown)."""
    if not target or any(c in target for c in "$`*?"):
        return None
    if target.startswith(("/", "~")) or (len(target) > 1 and target[1] == ":") or target.startswith("\\"):
        return recorded_relative(target, root)
    if current is None:
        return None
    here = recorded_relative(f"{current}/{target}" if current else target, root)
    if current and exists is not None and here is not None and not exists(here):
        from_root = recorded_relative(target, root)
        if from_root is not None and exists(from_root):
            return from_root  # the shell was back at the root (see the module docstring)
    return here


def command_dirs(command: str, start: str | None, root: str | None,
                 exists: Exists | None = None) -> tuple[list[tuple[Command, str | None]], str | None]:
    """Each simple command of a command line with the folder it ran in, and the folder the line ended in.

    `cd` is followed along the line in order (a `cd` inside `( … )` is followed too: close enough for the
    one-folder lines agents write); `cd` with no argument or `cd -` leaves the folder unknown. Only the first
    command of a pipeline is listed: what follows a `|` (`tail -20`, `grep -v ok`) reads its output.
    """
    current = start
    out: list[tuple[Command, str | None]] = []
    for pipeline in pipelines(command):
        for cmd in pipeline[:1]:
            if cmd.program in ("cd", "pushd") and len(pipeline) == 1:
                args = [a for a in cmd.args if not a.startswith("-") or a == "-"]
                current = _enter(current, args[0], root, exists) if args and args[0] != "-" else None
                continue
            if cmd.program == "popd":
                current = None
                continue
            out.append((cmd, current))
    return out, current


def next_shell_dir(command: str, start: str | None, root: str | None, output: str = "",
                   exists: Exists | None = None) -> str:
    """The folder a persistent shell is in after the line: where its `cd`s led, the root when they left the repo or
    the harness said it reset the shell."""
    reset = output.rfind("Shell cwd was reset to ")
    if reset >= 0:
        back = recorded_relative(output[reset + 23:].split("\n", 1)[0].strip(), root)
        return back or ""
    _, end = command_dirs(command, start, root, exists)
    return end if end is not None else ""


__all__ = ["command_dirs", "next_shell_dir"]
