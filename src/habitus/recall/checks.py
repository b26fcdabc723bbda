"""Is a recalled check still runnable here? The program, script, npm script or make target it needs must exist.

Bare programs on PATH are not judged. Everything is looked up inside the work tree only: a check
that `cd`s out of the repository is stale, a path argument that leaves the tree is not judged, and
`package.json` / `Makefile` are read through `habitus.capture.worktree` (no symlink out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from habitus.capture.worktree import confine_place, read_tree_text
from habitus.recall.lazyre import lazy_re


@dataclass
class CheckState:
    command: str
    stale: bool = False
    reason: str | None = None


_WRAPPERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
             ("pnpm", "exec"), ("bundle", "exec"), ("npx",), ("bunx",), ("pnpx",), ("time",), ("env",)}
_INTERPRETERS = {"python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "deno", "bun", "php"}
_PATH_ARG = lazy_re(r"^[\w.@+-]*(?:/[\w.@+-]*)+$|^[\w.@+-]+\.(?:py|sh|js|ts|mjs|cjs|rb|pl|go|rs|java|toml|cfg|ini)$")
_ENV_ASSIGN = lazy_re(r"^[A-Za-z_]\w*=")


def _segments(command: str) -> list[list[str]]:
    """The words of each simple command (shell-lexed: here-document bodies and redirections left out)."""
    from habitus.core.shell import simple_commands

    return [list(c.words) for c in simple_commands(command) if c.words]


class _Tree:
    """The folder a check runs in, as a path relative to the work tree's root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rel = ""

    def join(self, path: str) -> str:
        return f"{self.rel}/{path}" if self.rel else path

    def exists(self, path: str) -> bool | None:
        """Whether `path` (relative to the current folder) exists; None when it lies outside the tree."""
        target = confine_place(self.root, self.join(path))
        return None if target is None else target.exists()

    def cd(self, path: str) -> bool | None:
        """Enter a folder; None when it is outside the tree, False when it does not exist."""
        target = confine_place(self.root, self.join(path))
        if target is None:
            return None
        if not target.is_dir():
            return False
        rel = target.relative_to(self.root.resolve()).as_posix()
        self.rel = "" if rel == "." else rel
        return True

    def read(self, name: str) -> str | None:
        return read_tree_text(self.root, self.join(name))


def _package_scripts(tree: _Tree) -> set[str] | None:
    import json

    text = tree.read("package.json")
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return set(scripts) if isinstance(scripts, dict) else set()


def _make_targets(tree: _Tree) -> set[str] | None:
    for name in ("Makefile", "makefile", "GNUmakefile"):
        text = tree.read(name)
        if text is not None:
            return {m.group(1) for m in re.finditer(r"^([\w./-]+)\s*:(?!=)", text, re.MULTILINE)}
    return None


def check_state(command: str, root: Path) -> CheckState:
    """Is the program or script a check runs still there? Bare programs on PATH are not judged."""
    tree = _Tree(root)
    for tokens in _segments(command):
        while tokens and _ENV_ASSIGN.match(tokens[0]):
            tokens = tokens[1:]
        for wrapper in sorted(_WRAPPERS, key=len, reverse=True):
            if tuple(tokens[:len(wrapper)]) == wrapper:
                tokens = tokens[len(wrapper):]
                break
        if not tokens:
            continue
        program, args = tokens[0], tokens[1:]
        if program == "cd" and args:
            entered = tree.cd(args[0])
            if entered is None:
                return CheckState(command, True, f"folder {args[0]} is outside the repository")
            if not entered:
                return CheckState(command, True, f"folder {args[0]} no longer exists")
            continue
        if "/" in program and not program.startswith("/") and tree.exists(program) is False:
            return CheckState(command, True, f"program {program} no longer exists")
        if Path(program).name in _INTERPRETERS or re.match(r"python3?(\.\d+)?$", Path(program).name):
            if args and args[0] == "-m":
                args = args[2:]  # a module is not judged; its path arguments are
            else:
                script = next((a for a in args if not a.startswith("-")), None)
                if script and _PATH_ARG.match(script) and tree.exists(script) is False:
                    return CheckState(command, True, f"script {script} no longer exists")
                continue
        if program in {"npm", "yarn", "pnpm", "bun"} and args:
            name = args[1] if args[0] == "run" and len(args) > 1 else args[0]
            builtin = {"test", "install", "ci", "start", "exec", "run", "add", "i"}
            scripts = _package_scripts(tree)
            if scripts is None and (args[0] == "run" or name not in builtin):
                return CheckState(command, True, "package.json no longer exists")
            if scripts is not None and args[0] == "run" and name not in scripts:
                return CheckState(command, True, f"package.json has no script {name!r}")
            continue
        if program == "make":
            targets = _make_targets(tree)
            wanted = [a for a in args if not a.startswith("-") and "=" not in a]
            if targets is None:
                return CheckState(command, True, "Makefile no longer exists")
            missing = [t for t in wanted if t not in targets]
            if missing:
                return CheckState(command, True, f"Makefile has no target {missing[0]!r}")
            continue
        for arg in args:
            if arg.startswith("-") or any(c in arg for c in "*?[{$"):
                continue
            path = arg.split("::", 1)[0]
            if path.endswith("..."):  # a Go package pattern: `./...`, `./internal/x/...` names the folder before it
                path = path[:-3].rstrip("/") or "."
            if _PATH_ARG.match(path) and tree.exists(path) is False:
                return CheckState(command, True, f"{path} no longer exists")
    return CheckState(command)
