"""Every command's empty state (no traces, notes, workflows or rules yet) answers in words, never a traceback.

Found by a new user: `habitus notes list` with no notes crashed (issue 12, finding 16). Each command
runs in-process on an empty store, in a fresh git repo and in a plain folder, as text and as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

COMMANDS = [
    ["notes", "list"], ["notes", "list", "--all"], ["traces", "list"], ["traces", "stats", "--all"],
    ["traces", "stats"],
    ["workflows", "list"], ["workflows", "list", "--status", "all"], ["workflows", "export"],
    ["learn"], ["learn", "--show-rejected"], ["promote"], ["hooks", "status"], ["doctor"], ["config", "show"],
    ["traces", "search", "anything"], ["mcp", "uninstall", "--scope", "user"],
]


@pytest.mark.parametrize("where", ["repo", "plain"])
@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_empty_state_answers_without_a_traceback(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 args: list[str], as_json: bool, where: str) -> None:
    from typer.testing import CliRunner

    from habitus.cli.main import app
    from habitus.cli.output import UserError

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(repo if where == "repo" else plain)
    result = CliRunner().invoke(app, [*args, *(["--json"] if as_json else [])])
    assert result.exception is None or isinstance(result.exception, UserError | SystemExit), result.exception
    assert result.exit_code in (0, 1)
    if as_json and result.exit_code == 0:
        json.loads(result.stdout)  # one JSON document
    if not as_json and result.exit_code == 0 and args[-1] != "export":  # export prints the (empty) YAML
        assert result.stdout.strip()  # says something (e.g. "no notes"), not silence
