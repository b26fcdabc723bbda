"""Files named by a SpecStory export's tool calls, as paths relative to the repo the export lies in.

An export names files as the agent saw them on the machine it ran on: relative (`src/app.py`,
`./src/app.py`), absolute under that machine's checkout (`/Users/ann/dev/shop/src/app.py`), on
Windows (`c:\\Users\\ann\\shop\\src\\app.py`, `/d:/projects/shop/config.ts`), or the literal
`undefined` a Cursor export writes when it lost the path. The checkout's folder on that machine (the
recorded root) is found from the absolute paths themselves, in this order:

1. when the repo exists here, the ancestor folder under which the most named files exist here;
2. else the shallowest ancestor folder named like the local repo folder;
3. else the folder the agent most often `cd`-ed into, when it holds a named file.

Paths under the recorded root become relative to it; other absolute paths are kept as recorded (memory
never stores them: `habitus.core.paths.repo_relative`). Each call keeps what the export wrote in
`input.recorded_path` when the path changed.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from habitus.core import Trace
from habitus.core.paths import repo_relative

PATCH_FILE = re.compile(r"^(\*\*\* (?:Update|Add|Delete) File: )(.+)$", re.MULTILINE)
_DRIVE = re.compile(r"^/?([A-Za-z]):[\\/]")
_CD = re.compile(r"""(?:^|&&|;|\|\|)\s*cd\s+(?:"([^"]+)"|'([^']+)'|(\S+))""")
_LOST = frozenset({"undefined", "null", "none", ""})
_MAX_CANDIDATES = 400  # ancestors tried against the disk (each a stat per named file)


def clean_path(raw: str) -> str | None:
    """A path as a tool named it, without quotes and backticks, `/` separated; None for a lost one."""
    path = raw.strip().strip("`'\"").strip()
    if path.lower() in _LOST:
        return None
    drive = _DRIVE.match(path)
    if drive:  # `c:\a\b`, `/d:/a/b`: one spelling, `c:/a/b`
        path = f"{drive.group(1).lower()}:/{path[drive.end():]}"
    if "\\" in path and (drive or "/" not in path):
        path = path.replace("\\", "/")
    return path


def is_absolute(path: str) -> bool:
    return path.startswith("/") or bool(_DRIVE.match(path))


def relativize_calls(trace: Trace, local_root: str | None) -> None:
    """Rewrite the files the trace's tool calls name as repo-relative paths (see the module docstring)."""
    calls = [s.tool for s in trace.steps if s.tool is not None]
    named = [p for call in calls for p in _named(call.input) if is_absolute(p)]
    cds = [d for call in calls for d in _cd_targets(str(call.input.get("command") or ""))]
    root = recorded_root(named, cds, local_root)
    if root:
        trace.meta["recorded_root"] = root
    for call in calls:
        path = call.input.get("path")
        if isinstance(path, str):
            mapped = map_path(path, root)
            if mapped != path:
                call.input["recorded_path"], call.input["path"] = path, mapped
        patch = call.input.get("input")
        if isinstance(patch, str) and "*** Begin Patch" in patch:
            call.input["input"] = PATCH_FILE.sub(lambda m: m.group(1) + map_path(m.group(2), root), patch)


def map_path(path: str, root: str | None) -> str:
    """`path` relative to the recorded `root` when under it; a relative path in its clean form."""
    if root and is_absolute(path):
        fold = _folds(root)
        key = path.lower() if fold else path
        prefix = (root.lower() if fold else root).rstrip("/") + "/"
        if key.startswith(prefix):
            return repo_relative(path[len(prefix):]) or path
        return path
    return path if is_absolute(path) else (repo_relative(path) or path)


def recorded_root(named: list[str], cds: list[str], local_root: str | None) -> str | None:
    """The folder of the recording machine that was the local repo (see the module docstring)."""
    if not named:
        return None
    local = Path(local_root) if local_root else None
    if local is not None and local.is_dir():
        found = _by_existing_files(named, local)
        if found:
            return found
    if local is not None and local.name:
        found = _by_folder_name(named, local.name)
        if found:
            return found
    for target, _ in Counter(t.rstrip("/") for t in cds if is_absolute(t)).most_common():
        if any(_under(p, target) for p in named):
            return target
    return None


def _named(tool_input: dict[str, object]) -> list[str]:
    out = [p for p in (tool_input.get("path"),) if isinstance(p, str)]
    patch = tool_input.get("input")
    if isinstance(patch, str):
        out.extend(m.group(2).strip() for m in PATCH_FILE.finditer(patch))
    return out


def _cd_targets(command: str) -> list[str]:
    return [clean_path(next(g for g in m.groups() if g)) or "" for m in _CD.finditer(command)]


def _ancestors(path: str) -> list[tuple[str, str]]:
    """(folder, rest) for each proper ancestor folder of an absolute path, shallowest first."""
    parts = path.split("/")  # ["", "Users", …] or ["c:", "Users", …]: the first folder is parts[:2]
    return [("/".join(parts[:i]), "/".join(parts[i:])) for i in range(2, len(parts)) if parts[i]]


def _by_existing_files(named: list[str], local: Path) -> str | None:
    scores: Counter[str] = Counter()
    tried = 0
    for path in dict.fromkeys(named):
        for folder, rest in _ancestors(path):
            tried += 1
            if tried > _MAX_CANDIDATES:
                break
            rel = repo_relative(rest)
            if rel and (local / rel).exists():
                scores[folder] += 1
    if not scores:
        return None
    best = max(scores.values())
    return min((f for f, n in scores.items() if n == best), key=len)


def _by_folder_name(named: list[str], name: str) -> str | None:
    votes: Counter[str] = Counter()
    for path in named:
        for folder, _ in _ancestors(path):
            if folder.rsplit("/", 1)[-1].lower() == name.lower():
                votes[folder] += 1
                break
    return votes.most_common(1)[0][0] if votes else None


def _under(path: str, folder: str) -> bool:
    fold = _folds(folder)
    return (path.lower() if fold else path).startswith((folder.lower() if fold else folder).rstrip("/") + "/")


def _folds(path: str) -> bool:
    """Windows paths compare without case."""
    return bool(_DRIVE.match(path))


__all__ = ["clean_path", "is_absolute", "map_path", "recorded_root", "relativize_calls"]
