"""A replayable repo from a shipped history: a git bundle of the code plus an archive of `entire` checkpoints.

Shared real histories (e.g. `shared/corpus/real-history/<repo>/`) come as `code.bundle` (every ref of
the code) and `checkpoints.tar.xz` (the `entire/checkpoints/v1` tree: `<aa>/<rest>/<n>/…`).
`materialize_history(folder, dest)` clones the bundle to `dest` and commits the checkpoint tree to the
branch `entire/checkpoints/v1` of that clone, so `habitus ingest --git-branch … --repo dest` and
`habitus bench replay --repo dest` read it exactly as they read a repo whose maintainers use `entire`.
Nothing is copied into the project: `dest` is a folder the caller chose (usually a temporary one).
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
from pathlib import Path

from habitus.capture.entire import DEFAULT_BRANCH

BUNDLE = "code.bundle"
CHECKPOINTS = "checkpoints.tar.xz"


def _run(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} failed: {done.stderr.strip()[:300]}")
    return done.stdout.strip()


def materialize_history(folder: Path | str, dest: Path | str, *, branch: str = "main") -> Path:
    """Clone `folder/code.bundle` into `dest` (branch `branch` checked out) and add the checkpoint branch."""
    src, out = Path(folder), Path(dest)
    if not (src / BUNDLE).is_file():
        raise FileNotFoundError(f"{src / BUNDLE} not found")
    _run(["git", "clone", "-q", "--branch", branch, str(src / BUNDLE), str(out)])
    _run(["git", "-C", str(out), "config", "user.email", "replay@habitus.invalid"])
    _run(["git", "-C", str(out), "config", "user.name", "habitus replay"])
    archive = src / CHECKPOINTS
    if archive.is_file():
        with tempfile.TemporaryDirectory(prefix="habitus-ckpt-") as tmp:
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, filter="data")
            top = Path(tmp)
            entries = [p for p in top.iterdir()]
            if len(entries) == 1 and entries[0].is_dir() and len(entries[0].name) != 2:
                top = entries[0]  # the archive holds one top folder (`checkpoints/`) around the tree
            env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / ".habitus-index")}
            _run(["git", "-C", str(out), "--work-tree", str(top), "add", "-A", "."], env=env)
            tree = _run(["git", "-C", str(out), "write-tree"], env=env)
            commit = _run(["git", "-C", str(out), "commit-tree", tree, "-m", "entire checkpoints"])
            _run(["git", "-C", str(out), "update-ref", f"refs/heads/{DEFAULT_BRANCH}", commit])
    return out


__all__ = ["materialize_history"]
