"""Clean undo (issue 22 §4): install then uninstall leaves the repository exactly as it was.

Every agent and scope, for hooks and for the MCP server, through the CLI: after `install` and a
plain `uninstall` (no `--scope`), `git status` is clean and nothing of habitus is left in the work
tree (backups live in `$HABITUS_HOME/backups`); a file habitus created is gone, one the person had
is back byte for byte. Uninstall without `--scope` finds every scope and says which; with `--scope`
it touches only that one. A backup an older habitus left beside a file is still used.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from habitus.deliver.backups import LEGACY_SUFFIX, backups_root

from .conftest import git
from .test_cli import habitus_inproc

CASES = [("hooks", "claude", "user"), ("hooks", "claude", "project"), ("hooks", "claude", "local"),
         ("hooks", "codex", "user"), ("hooks", "codex", "project"),
         ("mcp", "claude", "user"), ("mcp", "claude", "project"), ("mcp", "claude", "local"),
         ("mcp", "codex", "user"), ("mcp", "codex", "project")]

# what a person already had in each file (for the "theirs" cases)
THEIRS = {".json": b'{\n    "theme": "dark",\n    "mcpServers": {"mine": {"command": "mine"}}\n}\n',
          ".toml": b'# my settings\nmodel = "gpt-5"\n\n[mcp_servers.mine]\ncommand = "mine"\n'}


@pytest.fixture(scope="session", params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    """Nothing here opens the store: run once, not once per store."""
    return request.param


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The agents' user folders, outside the repository (CLAUDE_CONFIG_DIR, CODEX_HOME)."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    return tmp_path


def _target(kind: str, agent: str, scope: str, repo: Path, places: Path) -> Path:
    if kind == "hooks":
        tails = {("claude", "user"): places / "claude-home" / "settings.json",
                 ("claude", "project"): repo / ".claude" / "settings.json",
                 ("claude", "local"): repo / ".claude" / "settings.local.json",
                 ("codex", "user"): places / "codex-home" / "hooks.json",
                 ("codex", "project"): repo / ".codex" / "hooks.json"}
    else:
        tails = {("claude", "user"): places / "claude-home" / ".claude.json",
                 ("claude", "project"): repo / ".mcp.json",
                 ("claude", "local"): places / "claude-home" / ".claude.json",
                 ("codex", "user"): places / "codex-home" / "config.toml",
                 ("codex", "project"): repo / ".codex" / "config.toml"}
    return tails[(agent, scope)]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def _cli(*args: str, repo: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    done = habitus_inproc(*args, cwd=repo, monkeypatch=monkeypatch)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.parametrize("before", ["absent", "theirs"])
@pytest.mark.parametrize(("kind", "agent", "scope"), CASES)
def test_install_then_uninstall_leaves_git_status_clean(repo: Path, places: Path, monkeypatch: pytest.MonkeyPatch,
                                                        kind: str, agent: str, scope: str, before: str) -> None:
    target = _target(kind, agent, scope, repo, places)
    if before == "theirs":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(THEIRS[target.suffix or ".json"])
        if repo in target.parents:
            git(repo, "add", "-f", str(target))
            git(repo, "commit", "-q", "-m", "their settings")
    files_before = _tree(repo)
    outside_before = target.read_bytes() if target.exists() else None

    _cli(kind, "install", "--agent", agent, "--scope", scope, repo=repo, monkeypatch=monkeypatch)
    assert "habitus" in target.read_text()
    assert not [p for p in target.parent.iterdir() if p.name.endswith((LEGACY_SUFFIX, ".habitus-backup"))]

    said = _cli(kind, "uninstall", repo=repo, monkeypatch=monkeypatch)
    assert f"({agent}, {scope})" in said  # it says which scope it found
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored") == ""
    assert _tree(repo) == files_before
    if outside_before is None:
        assert not target.exists()
        assert not (target.parent.exists() and not any(target.parent.iterdir()))  # no empty folder of ours
    else:
        assert target.read_bytes() == outside_before
    assert not backups_root().exists() or not any(backups_root().iterdir())  # the record went with the install


def test_uninstall_without_scope_finds_every_scope_and_says_which(repo: Path, places: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for agent, scope in [("claude", "project"), ("claude", "user"), ("codex", "project")]:
        _cli("hooks", "install", "--agent", agent, "--scope", scope, repo=repo, monkeypatch=monkeypatch)
    report = json.loads(_cli("hooks", "uninstall", "--json", repo=repo, monkeypatch=monkeypatch))
    assert sorted((c["agent"], c["scope"]) for c in report["changes"]) == [
        ("claude", "project"), ("claude", "user"), ("codex", "project")]
    assert {(c["agent"], c["scope"]) for c in report["checked"]} >= {("claude", "local"), ("codex", "user")}
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    again = _cli("hooks", "uninstall", repo=repo, monkeypatch=monkeypatch)
    assert "not installed" in again and "claude project" in again


def test_uninstall_with_a_scope_touches_only_that_scope(repo: Path, places: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for scope in ("project", "user"):
        _cli("mcp", "install", "--agent", "claude", "--scope", scope, repo=repo, monkeypatch=monkeypatch)
    report = json.loads(_cli("mcp", "uninstall", "--scope", "project", "--json", repo=repo, monkeypatch=monkeypatch))
    assert [(c["agent"], c["scope"]) for c in report["changes"]] == [("claude", "project")]
    assert not (repo / ".mcp.json").exists()
    assert "habitus" in json.loads((places / "claude-home" / ".claude.json").read_text())["mcpServers"]


def test_a_file_habitus_creates_has_the_users_usual_mode_and_is_deleted(repo: Path, places: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    old = os.umask(0o022)
    try:
        _cli("mcp", "install", "--agent", "claude", "--scope", "project", repo=repo, monkeypatch=monkeypatch)
    finally:
        os.umask(old)
    assert stat.S_IMODE((repo / ".mcp.json").stat().st_mode) == 0o644  # not mkstemp's 0600
    _cli("mcp", "uninstall", "--agent", "claude", "--scope", "project", repo=repo, monkeypatch=monkeypatch)
    assert not (repo / ".mcp.json").exists()  # no `{"mcpServers": {}}` left behind


def test_a_file_created_then_kept_by_the_user_is_not_deleted_later(repo: Path, places: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    settings = repo / ".claude" / "settings.json"
    _cli("hooks", "install", "--scope", "project", repo=repo, monkeypatch=monkeypatch)  # habitus creates it
    settings.write_bytes(b'{"theme": "dark"}\n')  # the person takes the file over (habitus' part gone)
    _cli("hooks", "install", "--scope", "project", repo=repo, monkeypatch=monkeypatch)
    _cli("hooks", "uninstall", repo=repo, monkeypatch=monkeypatch)
    assert settings.read_bytes() == b'{"theme": "dark"}\n'


def test_install_keeps_the_backup_in_habitus_home(repo: Path, places: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(THEIRS[".json"])
    out = json.loads(_cli("hooks", "install", "--scope", "project", "--json", repo=repo, monkeypatch=monkeypatch))
    backup = Path(out["backup"])
    assert backups_root() in backup.parents and backup.read_bytes() == THEIRS[".json"]
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_the_same_default_scope_for_hooks_and_mcp_and_scope_is_documented(repo: Path, places: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _cli("hooks", "install", repo=repo, monkeypatch=monkeypatch)
    _cli("mcp", "install", repo=repo, monkeypatch=monkeypatch)
    assert (places / "claude-home" / "settings.json").is_file()
    assert (places / "claude-home" / ".claude.json").is_file()
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""  # the default touches no work tree
    for command in (["hooks", "install"], ["mcp", "install"], ["hooks", "uninstall"], ["mcp", "uninstall"]):
        text = " ".join(_cli(*command, "--help", repo=repo, monkeypatch=monkeypatch).split())
        for scope in ("user", "project", "local"):
            assert scope in text
        if command[1] == "install":
            assert "user (the default)" in text and ".claude" in text and ".codex" in text


# --- backups an older habitus left beside the file -------------------------------------------------------------


def test_an_older_backup_beside_the_file_still_restores_it_and_is_removed(repo: Path, places: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = b'{"theme":"dark"}'  # compact: only its own bytes show that it came back
    settings.write_text(json.dumps({"theme": "dark", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "habitus hook Stop --agent claude"}]}]}}, indent=2))
    (settings.parent / ("settings.json" + LEGACY_SUFFIX)).write_bytes(original)
    said = _cli("hooks", "uninstall", repo=repo, monkeypatch=monkeypatch)
    assert settings.read_bytes() == original
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
    assert "older habitus" in said


def test_an_empty_older_backup_is_not_trusted(repo: Path, places: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"theme": "dark", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "habitus hook Stop --agent claude"}]}]}}, indent=2))
    (settings.parent / ("settings.json" + LEGACY_SUFFIX)).write_bytes(b"")  # what a full disk left
    said = _cli("hooks", "uninstall", repo=repo, monkeypatch=monkeypatch)
    assert json.loads(settings.read_text()) == {"theme": "dark"}  # not emptied
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
    assert "incomplete" in said


def test_install_moves_an_older_backup_out_of_the_work_tree(repo: Path, places: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = b'{"theme":"dark"}'
    settings.write_text(json.dumps({"theme": "dark", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "/old/python -m habitus.deliver.hook Stop --agent claude"}]}]}}))
    (settings.parent / ("settings.json" + LEGACY_SUFFIX)).write_bytes(original)
    out = json.loads(_cli("hooks", "install", "--scope", "project", "--json", repo=repo, monkeypatch=monkeypatch))
    assert Path(out["backup"]).read_bytes() == original and any("moved" in n for n in out["notes"])
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
    _cli("hooks", "uninstall", repo=repo, monkeypatch=monkeypatch)
    assert settings.read_bytes() == original


def test_promote_apply_leaves_nothing_but_agents_md_changed(repo: Path, places: Path) -> None:
    from backends import connect
    from habitus.capture.subject import repo_subject
    from habitus.core.quarantine import Allowlist
    from habitus.deliver.candidates import Candidate
    from habitus.deliver.promote import apply, propose

    (repo / "AGENTS.md").write_text("# Agents\n")
    git(repo, "add", "AGENTS.md")
    git(repo, "commit", "-q", "-m", "agents")
    (repo / "AGENTS.md.before-habitus").write_text("# Agents\n")  # an older habitus' backup, the same bytes
    (repo / "AGENTS.md.habitus-backup").write_text("# Agents, an earlier text\n")  # its copy before an apply
    conn = connect()
    evidence = [Candidate(id="c1", text="Run `make migrate` before `pytest`: the test database is not migrated.",
                          source="pitfall", session_ids={"s1", "s2", "s3"}, tokens_cost=4000, failures=3)]
    result = apply(conn, propose(conn, repo / "AGENTS.md", subject=repo_subject(repo), candidates=evidence,
                                 allowlist=Allowlist.build(["make migrate && pytest"])))
    conn.close()
    assert backups_root() in Path(result["backup"]).parents
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == "M AGENTS.md"
    assert sum("moved" in n for n in result["notes"]) == 2
    earlier = [p for p in Path(result["backup"]).parent.iterdir() if p.name.startswith("earlier-apply.")]
    assert [p.read_text() for p in earlier] == ["# Agents, an earlier text\n"]
