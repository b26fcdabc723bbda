"""Hook installation into real settings files: merge, idempotence, backup, byte-identical uninstall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from habitus.deliver.backups import backups_root, original_of
from habitus.deliver.files import ConfigFileError
from habitus.deliver.install import (
    EVENTS,
    OWNER_MARK,
    hooks_status,
    install_hooks,
    settings_path,
    uninstall_hooks,
)
from habitus.deliver.undo import json_valid

USER_SETTINGS = """{
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write", "timeout": 30}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
    }
}
"""


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_install_merges_beside_other_hooks_and_uninstall_restores_bytes(tmp_path: Path, agent: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_SETTINGS)
    original = path.read_bytes()

    change = install_hooks(agent, path)
    assert change.action == "installed"
    data = json.loads(path.read_text())
    assert data["model"] == "opus" and data["permissions"] == {"allow": ["Bash(ls:*)"]}
    post = data["hooks"]["PostToolUse"]
    assert post[0]["hooks"][0]["command"] == "prettier --write"  # the user's hook first, untouched
    assert OWNER_MARK in post[-1]["hooks"][0]["command"]
    for event, _ in EVENTS[agent]:
        assert any(OWNER_MARK in h["command"] for g in data["hooks"][event] for h in g["hooks"])
    assert data["hooks"]["Notification"] == [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
    assert Path(change.backup).read_bytes() == original

    assert install_hooks(agent, path).action == "unchanged"  # idempotent
    assert uninstall_hooks(agent, path).action == "uninstalled"
    assert path.read_bytes() == original


def test_install_into_missing_file_creates_it_and_uninstall_removes_it(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    change = install_hooks("claude", path)
    assert change.action == "installed" and change.backup is None
    assert hooks_status("claude", path)["installed"] is True
    uninstall_hooks("claude", path)
    assert not path.exists() and not path.parent.exists()  # the folder habitus made for it goes too


def test_each_install_keeps_the_file_as_it_was_before_it(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"a": 1}\n')
    install_hooks("claude", path)
    uninstall_hooks("claude", path)
    path.write_text('{"a": 2}\n')  # the user edits, then installs again
    install_hooks("claude", path)
    assert original_of(path, json_valid).data == b'{"a": 2}\n'  # the original is the file before this install
    uninstall_hooks("claude", path)
    assert path.read_bytes() == b'{"a": 2}\n'  # the user's later edit survives, byte for byte


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
def test_corrupt_settings_are_reported_and_never_overwritten(tmp_path: Path, content: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    with pytest.raises(ConfigFileError):
        install_hooks("claude", path)
    assert path.read_text() == content
    assert not (tmp_path / "settings.json.before-habitus").exists() and not backups_root().exists()
    assert hooks_status("claude", path)["error"]


def test_dry_run_shows_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_SETTINGS)
    change = install_hooks("claude", path, dry_run=True)
    assert change.action == "would-install" and "+" in change.diff and OWNER_MARK in change.diff
    assert path.read_text() == USER_SETTINGS


def test_uninstall_keeps_edits_made_after_install(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_SETTINGS)
    install_hooks("claude", path)
    data = json.loads(path.read_text())
    data["theme"] = "dark"
    path.write_text(json.dumps(data))
    uninstall_hooks("claude", path)
    after = json.loads(path.read_text())
    assert after["theme"] == "dark"
    assert OWNER_MARK not in path.read_text()
    assert after["hooks"]["PostToolUse"] == json.loads(USER_SETTINGS)["hooks"]["PostToolUse"]


@pytest.mark.parametrize(("agent", "scope", "tail"), [
    ("claude", "project", ".claude/settings.json"),
    ("claude", "local", ".claude/settings.local.json"),
    ("codex", "project", ".codex/hooks.json"),
])
def test_settings_path_per_scope_is_at_the_repo_root(repo: Path, agent: str, scope: str, tail: str) -> None:
    sub = repo / "src"
    sub.mkdir()
    assert settings_path(agent, scope, sub) == repo.resolve() / tail


def test_user_scope_honours_the_agents_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    assert settings_path("claude", "user") == tmp_path / "cc" / "settings.json"
    assert settings_path("codex", "user") == tmp_path / "cx" / "hooks.json"
    with pytest.raises(ConfigFileError):
        settings_path("codex", "local")


def test_codex_install_tells_the_user_about_trusting_hooks(tmp_path: Path) -> None:
    change = install_hooks("codex", tmp_path / "hooks.json")
    assert any("trust" in n for n in change.notes)
