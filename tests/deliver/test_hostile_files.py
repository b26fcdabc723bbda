"""Hostile config files × (install, uninstall, promote --apply): never damaged, uninstall byte-identical, backups made.

Each case writes a real file (or link, folder, read-only file) the way a user might have it, runs
the real install / uninstall / promotion functions the CLI calls, and checks the promise: either
the change is refused with one of habitus' one-line errors and the file (its bytes, mode and
link) is exactly as before, or the change is made with the user's content, line endings and
symlink kept, the original kept in `$HABITUS_HOME/backups` (nothing beside the file), and uninstall
brings the original bytes back.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.quarantine import Allowlist
from habitus.deliver.backups import backups_root, folder_for, original_of
from habitus.deliver.candidates import Candidate
from habitus.deliver.files import ConfigFileError
from habitus.deliver.install import install_hooks, uninstall_hooks
from habitus.deliver.mcp_install import install_mcp, uninstall_mcp
from habitus.deliver.promote import PromoteError, apply, propose
from habitus.deliver.rules_block import BEGIN, END, BlockError

from .conftest import make_repo

REFUSALS = (ConfigFileError, PromoteError, BlockError)

SETTINGS = (b'{\n  "model": "opus",\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "echo hi"}]}]'
            b"\n  }\n}\n")
MCP_JSON = b'{\n  "mcpServers": {\n    "other": {"command": "x", "args": []}\n  }\n}\n'
TOML = b'# my codex config\nmodel = "gpt-5"\n\n[mcp_servers.other]\ncommand = "x"\n'
MD = b"# Agents\n\nUse uv for Python.\n"

JSON_KINDS = ("settings.json", "hooks.json", ".mcp.json")
VALID = {"settings.json": SETTINGS, "hooks.json": SETTINGS, ".mcp.json": MCP_JSON, "config.toml": TOML,
         "AGENTS.md": MD, "CLAUDE.md": MD}

# (variant, kinds it applies to, content or None when the variant builds the path itself)
GENERIC = ("plain", "crlf", "symlink", "readonly", "readonly-folder", "invalid-utf8", "directory", "dangling-symlink",
           "bom", "empty", "deep-nesting")
SPECIFIC: dict[str, bytes] = {
    "settings.json:tabs": b'{\n\t"model": "opus"\n}\n',
    "settings.json:not-an-object": b"[1, 2]\n",
    "settings.json:hooks-not-an-object": b'{"hooks": []}\n',
    "settings.json:garbage": b'{"model": "opus",,}\n',
    "hooks.json:hooks-event-not-a-list": b'{"hooks": {"Stop": {"command": "x"}}}\n',
    ".mcp.json:servers-not-an-object": b'{"mcpServers": ["x"]}\n',
    ".mcp.json:garbage": b"{mcpServers: 1}\n",
    "config.toml:inline-mcp-servers": b'model = "gpt-5"\nmcp_servers = { other = { command = "x" } }\n',
    "config.toml:dotted-mcp-servers": b'model = "gpt-5"\nmcp_servers.other.command = "x"\n',
    "config.toml:mcp-servers-not-a-table": b"mcp_servers = 3\n",
    "config.toml:empty-mcp-servers-table": b"[mcp_servers]\n",
    "config.toml:no-trailing-newline": b'model = "gpt-5"',
    "config.toml:garbage": b"[mcp_servers\ncommand = \n",
    "config.toml:crlf-comments": (b'# top\r\nmodel = "gpt-5" # inline\r\n\r\n[mcp_servers.other] # theirs\r\n'
                                  b'command = "x"\r\n'),
    "AGENTS.md:markers-in-a-fence": f"# Agents\n\n```md\n{BEGIN}\n- example\n{END}\n```\n".encode(),
    "AGENTS.md:markers-in-inline-code": f"# Agents\n\nThe block sits between `{BEGIN}` and `{END}`.\n".encode(),
    "AGENTS.md:fenced-content-in-the-block": (f"# Agents\n\n{BEGIN}\n- Keep money in integer cents.\n```bash\n"
                                              f"make test  # hand-written\n```\nA paragraph by hand.\n{END}\n"
                                              "after\n").encode(),
    "AGENTS.md:two-blocks": f"{BEGIN}\n- a\n{END}\n{BEGIN}\n- b\n{END}\n".encode(),
    "CLAUDE.md:crlf-block": f"# Claude\r\n\r\n{BEGIN}\r\n- Old rule by hand.\r\n{END}\r\ntail\r\n".encode(),
    "CLAUDE.md:no-trailing-newline": b"# Claude\n\nUse uv.",
}


# refused whatever the user running habitus may write (root can write a read-only file, but must not)
MUST_REFUSE = {"readonly", "readonly-folder", "directory", "invalid-utf8", "dangling-symlink", "garbage",
               "two-blocks", "not-an-object", "hooks-not-an-object", "hooks-event-not-a-list",
               "servers-not-an-object", "mcp-servers-not-a-table"}


def _cases() -> list[tuple[str, str]]:
    cases = [(kind, variant) for kind in VALID for variant in GENERIC]
    return cases + [tuple(key.split(":", 1)) for key in SPECIFIC]  # type: ignore[misc]


def _content(kind: str, variant: str) -> bytes:
    base = VALID[kind]
    if f"{kind}:{variant}" in SPECIFIC:
        return SPECIFIC[f"{kind}:{variant}"]
    if variant == "crlf":
        return base.replace(b"\n", b"\r\n")
    if variant == "invalid-utf8":
        return base[:10] + b"\xff\xfe\xc3(" + base[10:]
    if variant == "bom":
        return b"\xef\xbb\xbf" + base
    if variant == "empty":
        return b""
    if variant == "deep-nesting":
        if kind in JSON_KINDS:
            return b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"
        if kind == "config.toml":
            return b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n"
        return base + b">" * 5000 + b" deep\n" + b"  " * 2000 + b"- deep list\n"
    return base


def _setup(tmp_path: Path, kind: str, variant: str) -> tuple[Path, Path]:
    """(the repo, the path habitus is asked to change), with the hostile state in place."""
    repo = make_repo(tmp_path)
    folder = repo / ".cfg"
    folder.mkdir()
    path = folder / kind
    content = _content(kind, variant)
    if variant == "directory":
        path.mkdir()
    elif variant == "symlink":
        elsewhere = tmp_path / "dotfiles"
        elsewhere.mkdir()
        (elsewhere / kind).write_bytes(content)
        path.symlink_to(elsewhere / kind)
    elif variant == "dangling-symlink":
        path.symlink_to(tmp_path / "nowhere" / kind)
    else:
        path.write_bytes(content)
    if variant == "readonly":
        path.chmod(0o444)
    if variant == "readonly-folder":
        folder.chmod(0o555)
    return repo, path


def _state(path: Path) -> tuple[object, ...]:
    """Everything about a path that must not change when habitus refuses."""
    if path.is_symlink():
        target = path.resolve()
        return ("link", os.readlink(path), target.read_bytes() if target.is_file() else None)
    if path.is_dir():
        return ("dir", sorted(p.name for p in path.iterdir()))
    if not path.exists():
        return ("missing",)
    return ("file", path.read_bytes(), stat.S_IMODE(path.stat().st_mode))


def _parsed(kind: str, data: bytes) -> dict:
    text = data.decode("utf-8")
    return tomllib.loads(text) if kind == "config.toml" else (json.loads(text) if text.strip() else {})


def _without_ours(kind: str, data: dict) -> dict:
    data = json.loads(json.dumps(data))
    if kind == "config.toml":
        servers = data.get("mcp_servers", {})
        servers.pop("habitus", None)
        if not servers and "mcp_servers" in data:
            data.pop("mcp_servers")
        return data
    if kind == ".mcp.json":
        data.get("mcpServers", {}).pop("habitus", None)
        if data.get("mcpServers") == {}:
            data.pop("mcpServers")
        return data
    hooks = data.get("hooks", {})
    for event in list(hooks):
        hooks[event] = [g for g in hooks[event] if "habitus.deliver.hook" not in json.dumps(g)]
        if not hooks[event]:
            del hooks[event]
    if hooks == {}:
        data.pop("hooks", None)
    return data


def _ops(kind: str, repo: Path, path: Path) -> tuple[Callable[[], object], Callable[[], object]]:
    if kind == "settings.json":
        return (lambda: install_hooks("claude", path)), (lambda: uninstall_hooks("claude", path))
    if kind == "hooks.json":
        return (lambda: install_hooks("codex", path)), (lambda: uninstall_hooks("codex", path))
    if kind == ".mcp.json":
        return (lambda: install_mcp("claude", "project", cwd=repo, path=path)), \
            (lambda: uninstall_mcp("claude", "project", cwd=repo, path=path))
    return (lambda: install_mcp("codex", "project", cwd=repo, path=path)), \
        (lambda: uninstall_mcp("codex", "project", cwd=repo, path=path))


def _restore_modes(path: Path) -> None:
    path.parent.chmod(0o755)
    if path.exists() and not path.is_symlink() and path.is_file():
        path.chmod(0o644)


@pytest.mark.parametrize(("kind", "variant"), [c for c in _cases() if c[0] in (*JSON_KINDS, "config.toml")])
def test_install_then_uninstall_never_damages_a_config_file(tmp_path: Path, kind: str, variant: str) -> None:
    repo, path = _setup(tmp_path, kind, variant)
    before = _state(path)
    original = path.read_bytes() if path.is_file() else None
    install, uninstall = _ops(kind, repo, path)
    try:
        try:
            install()
        except REFUSALS as exc:
            assert "\n" not in str(exc)
            assert _state(path) == before  # refused: bytes, mode and link untouched
            assert not backups_root().exists() or not any(backups_root().iterdir())
            return
        assert variant not in MUST_REFUSE and variant != "deep-nesting", "should have been refused"
        after = path.read_bytes()
        assert path.is_symlink() == (before[0] == "link")  # a link stays a link (written through)
        new = _parsed(kind, after)
        if original is not None and original.strip():
            mine = _parsed(kind, original.removeprefix(b"\xef\xbb\xbf"))
            assert _without_ours(kind, new) == _without_ours(kind, mine)
            assert (b"\r\n" in after) == (b"\r\n" in original)  # line endings kept
            assert original_of(path, lambda _b: True).data == original  # the original, kept in our home
        assert _beside(path) == []  # nothing of ours in the user's folder
        uninstall()
        if original is None:
            assert not path.exists()
        else:
            assert path.read_bytes() == original  # byte-identical after uninstall
            assert _state(path) == before
        assert _beside(path) == [] and not folder_for(path).exists()  # uninstall forgot the record
    finally:
        _restore_modes(path)


def _beside(path: Path) -> list[str]:
    """Files next to `path` whose names say they are habitus' (backups older versions left there)."""
    return [p.name for p in path.parent.iterdir() if "habitus" in p.name and p.name != path.name]


SESSIONS_RAN = Allowlist.build(["make migrate && pytest"])  # what the repo's sessions ran: a rule may name it


def _evidence() -> list[Candidate]:
    return [Candidate(id="c1", text="Run `make migrate` before `pytest`: the test database is not migrated.",
                      source="pitfall", session_ids={"s1", "s2", "s3"}, tokens_cost=4000, failures=3)]


def _outside_block(text: str) -> str:
    from habitus.deliver.rules_block import find_block

    span = find_block(text)
    return text if span is None else text[: span[0]] + text[span[1]:]


@pytest.mark.parametrize(("kind", "variant"), [c for c in _cases() if c[0].endswith(".md")])
def test_promote_apply_never_damages_agents_md(tmp_path: Path, kind: str, variant: str) -> None:
    repo, path = _setup(tmp_path, kind, variant)
    before = _state(path)
    original = path.read_bytes() if path.is_file() else None
    conn = connect()
    try:
        try:
            result = apply(conn, propose(conn, path, subject=repo_subject(repo), candidates=_evidence(),
                                         allowlist=SESSIONS_RAN))
        except REFUSALS as exc:
            assert "\n" not in str(exc)
            assert _state(path) == before
            return
        assert variant not in MUST_REFUSE, "should have been refused"
        assert result["written"]
        text = path.read_bytes().decode("utf-8")
        assert "make migrate" in text
        assert path.is_symlink() == (before[0] == "link")
        if original:
            old = original.decode("utf-8")
            added = text[len(old):] if text.startswith(old) else ""
            # outside the block every character is kept (a new block is only appended)
            assert _outside_block(text) == _outside_block(old) or (added and BEGIN in added)
            assert ("\r\n" in text) == ("\r\n" in old)
            if "\r\n" in old:
                assert "\n" not in text.replace("\r\n", "")  # no LF-only line slipped in
            assert Path(result["backup"]).read_bytes() == original  # the text before this apply
            assert original_of(path, lambda _b: True).data == original  # and before the first
            assert backups_root() in Path(result["backup"]).parents and _beside(path) == []
            if variant == "fenced-content-in-the-block":
                assert "```bash\nmake test  # hand-written\n```\nA paragraph by hand.\n" in text
            if variant.startswith("markers-in"):
                assert text.startswith(old)  # the quoted markers stayed text; a real block was appended
    finally:
        conn.close()
        _restore_modes(path)


def test_symlinked_claude_md_stays_a_link_to_agents_md(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "AGENTS.md").write_bytes(MD)
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    conn = connect()
    apply(conn, propose(conn, repo / "CLAUDE.md", subject=repo_subject(repo), candidates=_evidence(),
                        allowlist=SESSIONS_RAN))
    assert os.readlink(repo / "CLAUDE.md") == "AGENTS.md"
    assert "make migrate" in (repo / "AGENTS.md").read_text()


def test_uninstall_refuses_a_file_made_read_only_after_install(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(SETTINGS)
    install_hooks("claude", path)
    installed = path.read_bytes()
    path.chmod(0o444)
    with pytest.raises(ConfigFileError, match="read-only"):
        uninstall_hooks("claude", path)
    assert path.read_bytes() == installed


def test_a_config_damaged_by_an_older_install_is_repaired_by_uninstall(tmp_path: Path) -> None:
    """Older versions appended a section to an inline `mcp_servers` table (invalid TOML); uninstall removes it."""
    path = tmp_path / "config.toml"
    original = b'mcp_servers = { other = { command = "x" } }\n'
    path.write_bytes(original + b'\n# habitus:mcp:begin sep=1 (managed by `habitus mcp install`)\n'
                     b'[mcp_servers.habitus]\ncommand = "/py"\nargs = ["-m", "habitus", "mcp"]\n# habitus:mcp:end\n')
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(path.read_text())
    uninstall_mcp("codex", path=path)
    assert path.read_bytes() == original


def test_inline_mcp_servers_table_gets_our_server_inside_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    original = b'model = "gpt-5"\nmcp_servers = { other = { command = "x" } }\n'
    path.write_bytes(original)
    install_mcp("codex", path=path, python="/py")
    data = tomllib.loads(path.read_text())
    assert data["mcp_servers"]["habitus"] == {"command": "/py", "args": ["-m", "habitus", "mcp"],
                                              "env_vars": ["HABITUS_HOME"]}
    assert data["mcp_servers"]["other"] == {"command": "x"}
    uninstall_mcp("codex", path=path)
    assert path.read_bytes() == original
