"""Config files a person wrote in ways a line- or float-based editor gets wrong (issue 21 §4).

Each case is a real file changed by the real install / uninstall / promote functions: numbers keep
their text (Node must still parse the file), TOML is edited by its structure (a multi-line string
that holds marker lines is text, a user's table placed between an older install's markers is
theirs), markers quoted in an indented code block or an HTML comment are not the managed block,
and a file that cannot be handled is one line, never a traceback.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.quarantine import Allowlist
from habitus.deliver.candidates import Candidate
from habitus.deliver.install import install_hooks, uninstall_hooks
from habitus.deliver.mcp_install import install_mcp, uninstall_mcp
from habitus.deliver.promote import apply, propose
from habitus.deliver.rules_block import BEGIN, END, find_block, parse_rules

from .test_cli import habitus

# --- JSON: numbers keep their text; text that is not Unicode is kept as the escape it was written as ---

NUMBERS = [
    b'{"x": 1e400}\n',  # a float beyond double range: Python reads inf and writes `Infinity`
    b'{"x": -1e400, "y": 1E+2}\n',
    b'{"x": 0.1000000000000000055511151231257827}\n',  # more digits than a double keeps
    b'{"x": 1.50, "y": 2.0e-3}\n',
    b'{"x": ' + b"9" * 5000 + b"}\n",  # beyond Python's int-from-text limit (4,300 digits)
]


@pytest.mark.parametrize("content", NUMBERS, ids=["1e400", "neg-and-exp", "long-fraction", "trailing-zeros",
                                                  "5000-digit-int"])
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_numbers_keep_their_text_through_install(tmp_path: Path, content: bytes, agent: str) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    install_hooks(agent, path)
    text = path.read_text()
    assert "Infinity" not in text and "NaN" not in text
    for token in content.decode().strip("{}\n").split(","):
        assert token.split(":", 1)[1].strip() in text  # the number exactly as the person wrote it
    uninstall_hooks(agent, path)
    assert path.read_bytes() == content


def test_a_number_the_user_added_after_install_keeps_its_text_on_uninstall(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"a": 1}\n')
    install_hooks("claude", path)
    data = path.read_text().replace('"a": 1', '"a": 1, "big": 1e400, "exact": 3.14159265358979323846')
    path.write_text(data)
    uninstall_hooks("claude", path)
    text = path.read_text()
    assert "1e400" in text and "3.14159265358979323846" in text and "habitus" not in text


@pytest.mark.parametrize("content", [b'{"x": "\\ud800"}\n', b'{"\\udfff": "lone low", "ok": "caf\\u00e9"}\n',
                                     b'{"x": "a\\ud83d"}\n'])
def test_a_lone_surrogate_escape_is_kept_as_written(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    install_hooks("claude", path)
    after = path.read_bytes()
    after.decode("utf-8")  # the file is still UTF-8
    assert json.loads(after) | {} and json.loads(content).keys() <= json.loads(after).keys()
    for key, value in json.loads(content).items():
        assert json.loads(after)[key] == value
    uninstall_hooks("claude", path)
    assert path.read_bytes() == content


def test_cli_with_a_lone_surrogate_in_settings_is_not_a_traceback(repo: Path) -> None:
    settings = repo / "s.json"
    settings.write_bytes(b'{"x": "\\ud800"}\n')
    done = habitus("hooks", "install", "--settings", str(settings), cwd=repo)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    done = habitus("mcp", "install", "--agent", "claude", "--scope", "project", cwd=repo)
    assert done.returncode == 0 and "Traceback" not in done.stderr


# --- TOML: edited by its structure -------------------------------------------------------------------------

LEGACY_SECTION = ('# habitus:mcp:begin sep=1 (managed by `habitus mcp install`)\n[mcp_servers.habitus]\n'
                  'command = "/py"\nargs = ["-m", "habitus", "mcp"]\nenv_vars = ["HABITUS_HOME"]\n')


def test_marker_lines_inside_a_multiline_string_are_text(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    notes = 'notes = """\n# habitus:mcp:begin sep=0\nkeep every line of this\n# habitus:mcp:end\n"""\n'
    path.write_text(notes)
    install_mcp("codex", path=path, python="/py")
    assert tomllib.loads(path.read_text())["notes"] == tomllib.loads(notes)["notes"]
    uninstall_mcp("codex", path=path)
    after = tomllib.loads(path.read_text())
    assert "habitus" not in after.get("mcp_servers", {})  # uninstalled, not left behind
    assert after["notes"] == tomllib.loads(notes)["notes"]  # and the string's content is intact
    assert path.read_text() == notes


def test_uninstall_with_marker_lines_in_a_string_after_our_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    text = ('[mcp_servers.habitus]\ncommand = "/py"\nargs = ["-m", "habitus", "mcp"]\n\n[profile]\n'
            'prompt = """\n# habitus:mcp:begin sep=0\n# habitus:mcp:end\nstill mine\n"""\n')
    path.write_text(text)
    uninstall_mcp("codex", path=path)
    after = tomllib.loads(path.read_text())
    assert "mcp_servers" not in after or "habitus" not in after["mcp_servers"]
    assert after["profile"]["prompt"] == "# habitus:mcp:begin sep=0\n# habitus:mcp:end\nstill mine\n"


def test_a_users_table_inside_an_old_marker_pair_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "gpt-5"\n\n' + LEGACY_SECTION + '\n[mcp_servers.mine]\ncommand = "mine"\n'
                    '# habitus:mcp:end\n')
    uninstall_mcp("codex", path=path)
    text = path.read_text()
    assert tomllib.loads(text) == {"model": "gpt-5", "mcp_servers": {"mine": {"command": "mine"}}}
    assert "habitus:mcp" not in text  # the old markers went with our table


def test_an_old_marked_section_is_removed_with_its_markers(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    original = 'model = "gpt-5"\n'
    path.write_text(original + "\n" + LEGACY_SECTION + "# habitus:mcp:end\n")
    uninstall_mcp("codex", path=path)
    assert path.read_text() == original


def test_an_old_marked_section_in_a_crlf_file_leaves_no_blank_line_behind(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    original = 'model = "gpt-5"\r\n'
    path.write_bytes((original + "\r\n" + LEGACY_SECTION.replace("\n", "\r\n") + "# habitus:mcp:end\r\n").encode())
    uninstall_mcp("codex", path=path)  # no backup in $HABITUS_HOME: the older version kept none here
    assert path.read_bytes() == original.encode()


def test_a_new_install_writes_no_marker_lines_and_uninstall_restores_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    original = '# mine\nmodel = "gpt-5"\n\n[mcp_servers.other]\ncommand = "x"\n\n[profiles.fast]\nmodel = "mini"\n'
    path.write_text(original)
    install_mcp("codex", path=path, python="/py")
    assert "habitus:mcp:begin" not in path.read_text()
    assert tomllib.loads(path.read_text())["mcp_servers"]["other"] == {"command": "x"}
    uninstall_mcp("codex", path=path)
    assert path.read_text() == original


# --- AGENTS.md: markers that are quoted, not the block ----------------------------------------------------

QUOTED_MARKERS = {
    "indented-code": f"# Agents\n\nThe block looks like this:\n\n    {BEGIN}\n    - a rule\n    {END}\n\nUse uv.\n",
    "tab-indented-code": f"# Agents\n\n\t{BEGIN}\n\t- a rule\n\t{END}\n",
    "html-comment": f"# Agents\n\n<!--\nExample of the habitus block:\n{BEGIN}\n- a rule\n{END}\n-->\nUse uv.\n",
    "html-comment-opened-on-a-text-line": f"Use uv. <!-- an example follows\n{BEGIN}\n- a rule\n{END}\nend -->\n",
    "long-fence": "````md\n```\n````\n" + f"````\n{BEGIN}\n- a rule\n{END}\n````\n",
}


@pytest.mark.parametrize("name", list(QUOTED_MARKERS))
def test_quoted_markers_are_not_the_block(name: str) -> None:
    assert find_block(QUOTED_MARKERS[name]) is None
    assert parse_rules(QUOTED_MARKERS[name]) == []


@pytest.mark.parametrize("name", list(QUOTED_MARKERS))
def test_promote_leaves_quoted_markers_as_they_are_and_appends_a_block(tmp_path: Path, name: str) -> None:
    from .conftest import make_repo

    repo = make_repo(tmp_path)
    path = repo / "AGENTS.md"
    path.write_text(QUOTED_MARKERS[name])
    conn = connect()
    evidence = [Candidate(id="c1", text="Run `make migrate` before `pytest`: the test database is not migrated.",
                          source="pitfall", session_ids={"s1", "s2", "s3"}, tokens_cost=4000, failures=3)]
    apply(conn, propose(conn, path, subject=repo_subject(repo), candidates=evidence,
                        allowlist=Allowlist.build(["make migrate && pytest"])))
    text = path.read_text()
    assert text.startswith(QUOTED_MARKERS[name])  # every quoted line kept, the block appended after
    assert "make migrate" in text[len(QUOTED_MARKERS[name]):]


def test_a_real_block_indented_up_to_three_spaces_is_still_the_block() -> None:
    text = f"# Agents\n\n   {BEGIN}\n- a rule\n   {END}\n"
    assert find_block(text) is not None and parse_rules(text) == [["a rule"]]
