"""Fixtures for delivery tests: a real git repo in a temp folder and a way to run the real hook entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo with one commit (so it has a subject)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# demo\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "init")
    return root


def run_hook(event: str, payload: object, *, agent: str = "claude", env: dict[str, str] | None = None,
             budget: str | None = None, raw: bytes | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    """Run the real entry point as the agent does: payload JSON on stdin, the event as argument."""
    args = [sys.executable, "-m", "habitus.deliver.hook", event, "--agent", agent]
    if budget:
        args += ["--budget", budget]
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run(args, input=data, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})})
