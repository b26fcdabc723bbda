"""Files a team commits name no path of this machine; user-scope files may; `doctor` says what each hook runs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from habitus.deliver.install import EVENTS, install_hooks, settings_path, uninstall_hooks, with_ours
from habitus.deliver.mcp_install import install_mcp
from habitus.deliver.runner import choose_runner, describe_command, hook_command, is_habitus_hook

from .test_cli import habitus, habitus_inproc

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugins" / "habitus"
HERE = str(Path(sys.executable).parent)  # any absolute path of this machine's environment starts here


def _no_local_paths(text: str) -> bool:
    return HERE not in text and sys.executable not in text and str(Path.home()) not in text


@pytest.mark.parametrize(("command", "ours"), [
    ("habitus hook UserPromptSubmit --agent claude", True),
    ("uvx habitus hook PreToolUse --agent codex", True),
    ("/opt/venv/bin/habitus hook Stop --agent codex", True),
    ("'/path with space/python' -m habitus.deliver.hook SessionEnd --agent claude", True),
    ("myhabitus hook Stop", False),
    ("echo habitus", False),
    ("habitus recall x", False),
])
def test_our_hook_commands_are_recognised_in_every_runner_form(command: str, ours: bool) -> None:
    assert is_habitus_hook(command) is ours


def test_project_scope_runs_habitus_from_path_and_user_scope_this_interpreter(repo: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(repo.parent / "claude-home"))
    assert (choose_runner("project"), choose_runner("local"), choose_runner("user")) == ("path", "python", "python")
    done = habitus_inproc("hooks", "install", "--agent", "claude", "--scope", "project", cwd=repo,
                          monkeypatch=monkeypatch)
    assert done.returncode == 0, done.stderr
    project = (repo / ".claude" / "settings.json").read_text()
    assert _no_local_paths(project) and "habitus hook UserPromptSubmit --agent claude" in project
    habitus_inproc("hooks", "install", "--agent", "claude", "--scope", "user", cwd=repo, monkeypatch=monkeypatch)
    user = settings_path("claude", "user").read_text()
    assert f"{sys.executable} -m habitus.deliver.hook" in user


def test_runner_is_configurable_and_uninstall_still_finds_our_hooks(repo: Path, habitus_home: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (habitus_home / "config.toml").write_text('[deliver]\nrunner = "uvx"\n')
    path = repo / "settings.json"
    path.write_text('{"theme": "dark"}\n')
    install_hooks("codex", path, runner=choose_runner("user"))
    assert "uvx habitus hook Stop --agent codex" in path.read_text()
    uninstall_hooks("codex", path)
    assert path.read_text() == '{"theme": "dark"}\n'
    bad = habitus_inproc("hooks", "install", "--settings", str(path), "--runner", "pipx", cwd=repo,
                         monkeypatch=monkeypatch)
    assert bad.returncode == 1 and "unknown runner 'pipx'" in bad.stderr


def test_project_mcp_json_names_habitus_not_this_interpreter(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = habitus_inproc("mcp", "install", "--agent", "claude", "--scope", "project", cwd=repo,
                          monkeypatch=monkeypatch)
    assert done.returncode == 0, done.stderr
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["habitus"]
    assert (entry["command"], entry["args"], entry["alwaysLoad"]) == ("habitus", ["mcp"], True)
    install_mcp("codex", "project", cwd=repo, runner="path")
    assert _no_local_paths((repo / ".codex" / "config.toml").read_text())


def test_plugin_files_are_portable_and_match_the_installed_hooks() -> None:
    for path in PLUGIN.rglob("*"):
        if path.is_file():
            assert _no_local_paths(path.read_text()), path
    plugin_hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert plugin_hooks == with_ours({}, "claude", PLUGIN / "hooks" / "hooks.json", runner="path")["hooks"]
    assert [e for e, _m in EVENTS["claude"]] == list(plugin_hooks)
    mcp = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["habitus"]
    assert (mcp["command"], mcp["args"]) == ("habitus", ["mcp"])
    from habitus import __version__

    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert manifest["version"] == market["plugins"][0]["version"] == __version__


def test_describe_command_says_what_runs_and_whether_it_is_portable(tmp_path: Path) -> None:
    python = describe_command(hook_command("claude", "Stop", "python"))
    assert (python["runner"], python["portable"], python["resolves_to"]) == ("python", False, sys.executable)
    on_path = describe_command("habitus hook Stop --agent claude")
    assert on_path["portable"] and on_path["runner"] == "path"
    missing = describe_command("/nowhere/python -m habitus.deliver.hook Stop --agent claude")
    assert not missing["runnable"] and missing["resolves_to"] is None


def test_doctor_lists_each_installed_hook_and_what_it_runs(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_home = repo.parent / "claude-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(env_home))
    monkeypatch.setenv("CODEX_HOME", str(repo.parent / "codex-home"))
    habitus_inproc("hooks", "install", "--agent", "claude", "--scope", "project", cwd=repo, monkeypatch=monkeypatch)
    habitus_inproc("hooks", "install", "--agent", "codex", "--scope", "user", cwd=repo, monkeypatch=monkeypatch)
    monkeypatch.setenv("PATH", os.pathsep.join([HERE, "/usr/bin", "/bin"]))
    report = json.loads(habitus("doctor", "--json", cwd=repo).stdout)
    found = {(h["agent"], h["scope"]): h for h in report["hooks"]}
    assert set(found) == {("claude", "project"), ("codex", "user")}
    claude = found[("claude", "project")]["events"]["UserPromptSubmit"]["runs"][0]
    assert claude["command"] == "habitus hook UserPromptSubmit --agent claude"
    assert claude["resolves_to"] == str(Path(HERE) / "habitus") and claude["portable"]
    codex = found[("codex", "user")]["events"]["Stop"]["runs"][0]
    assert codex["resolves_to"] == sys.executable and not codex["portable"]
    text = habitus("doctor", cwd=repo).stdout
    assert "habitus hook UserPromptSubmit --agent claude" in text


def test_codex_entry_forwards_habitus_home_and_replaces_an_older_habitus_entry(repo: Path) -> None:
    import tomllib

    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    older = ('model = "gpt-5"\n\n# habitus:mcp:begin sep=0 (managed by `habitus mcp install`)\n[mcp_servers.habitus]\n'
             'command = "/old/python"\nargs = ["-m", "habitus", "mcp"]\n# habitus:mcp:end\n')
    path.write_text(older)
    assert install_mcp("codex", "project", cwd=repo, runner="path").action == "installed"
    entry = tomllib.loads(path.read_text())["mcp_servers"]["habitus"]
    assert entry == {"command": "habitus", "args": ["mcp"], "env_vars": ["HABITUS_HOME"]}
    assert path.read_text().count("[mcp_servers.habitus]") == 1
    assert install_mcp("codex", "project", cwd=repo, runner="path").action == "unchanged"
