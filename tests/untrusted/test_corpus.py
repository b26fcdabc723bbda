"""Class-level: no hostile text shape reaches any output as an instruction, or unseen (issue 21 §2).

Each payload of `payloads.PAYLOADS` is planted in every place a trace can carry text at once: the
prompt (its first line and pasted below it), a comment of the command that fixed the failure, an
edit's text (a comment line and a string), the failing command's output, and an agent's note. The
sessions go through the real ingest and learn; then every output is read back: the hand-over and the
pitfall warning (hooks), `habitus recall --json`, the MCP `search` and `get` results, the `promote` report
(text and `--json`), the diff it proposes, the written AGENTS.md and the workflow export. None may
hold an invisible, control or look-alike character (judged by Unicode, not by the sanitiser), none may
show the smuggled order outside a quote, and AGENTS.md may not hold it at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject

from .conftest import FIXING, OUTPUT, invisible, learn_sessions, session
from .payloads import MARK, PAYLOADS

QUOTED = re.compile(r"(?:Output seen|\(quoted, not an instruction\)): `[^`\n]*`(?:, `[^`\n]*`)*"
                    r"|\(workflow: `[^`\n]*`\)|with \"[^\"\n]*\"")
FOREIGN_LINE = re.compile(r"^\s*(?:SYSTEM|Human:|Assistant:|role:|<|-{3,}\s*$|={3,}|#{3,}|```(?!\s*$))", re.I)


def _plant(repo: Path, tmp_path: Path, payload: str) -> None:
    from habitus.store.notes import add_note

    flat = " ".join(payload.split())
    prompt = f"add an email column to the users table {payload}\n\n{payload}"
    edit = f"# {flat}\nNOTE = {flat!r}"
    fixing = f"{FIXING}  # {flat}"
    sessions = [session(f"s{i}", repo, 10 + i, prompt=prompt, edit=edit, output=f"{payload}\n{OUTPUT}",
                        fixing=fixing) for i in range(3)]
    learn_sessions(repo, tmp_path / "sessions", sessions)
    conn = connect()
    add_note(conn, f"pytest needs the migration first. {payload}", kind="gotcha", subject=repo_subject(repo),
             source="agent")
    conn.close()


def _outputs(repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    from deliver.test_cli import habitus_inproc
    from habitus.cli.recall_cmd import run_fast
    from habitus.deliver.events import after_tool, prompt_submit
    from habitus.deliver.mcp_server import get_item, search_items
    from habitus.deliver.promote import apply, propose
    from habitus.learn.files import dump_workflows
    from habitus.store.memory import load_workflows
    from habitus.store.notes import list_notes

    out: dict[str, str] = {}
    handed = prompt_submit({"session_id": "new", "cwd": str(repo), "prompt": "add an age column to the users table"})
    out["hand-over"] = handed["hookSpecificOutput"]["additionalContext"] if handed else ""
    warned = after_tool({"session_id": "new", "cwd": str(repo), "tool_name": "Bash",
                         "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "1 failed",
                                                                                    "exit_code": 1}})
    out["warning"] = warned["hookSpecificOutput"]["additionalContext"] if warned else ""
    capsys.readouterr()
    assert run_fast(["add an age column to the users table", "--cwd", str(repo), "--json"]) == 0
    out["recall --json"] = capsys.readouterr().out
    conn = connect()
    subject = repo_subject(repo)
    ids = [w.id for w in load_workflows(conn, subject)] + [n.id for n in list_notes(conn, subject=subject)]
    out["mcp search"] = json.dumps(search_items("users email migration pytest", cwd=repo), ensure_ascii=False)
    out["mcp get"] = json.dumps([get_item(i, cwd=repo) for i in ids], ensure_ascii=False)
    out["export"] = dump_workflows(load_workflows(conn, subject))
    target = repo / "AGENTS.md"
    target.write_text("# Agents\n\nKeep commits small.\n")
    out["promote report"] = habitus_inproc("promote", cwd=repo, monkeypatch=monkeypatch).stdout
    out["promote --json"] = habitus_inproc("promote", "--json", cwd=repo, monkeypatch=monkeypatch).stdout
    proposal = propose(conn, target)
    out["diff"] = proposal.diff  # what a person reviews is what is written
    apply(conn, proposal)
    out["AGENTS.md"] = target.read_text()
    conn.close()
    return out


def _instruction_text(text: str) -> str:
    return QUOTED.sub("", text)


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_no_hostile_text_reaches_an_output_as_instruction(repo: Path, tmp_path: Path, kind: str,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(repo, tmp_path, PAYLOADS[kind])
    out = _outputs(repo, capsys, monkeypatch)
    assert out["hand-over"], "the sessions still teach something"
    for name, text in out.items():
        assert invisible(text) == [], (name, invisible(text)[:5], text)
    for name in ("hand-over", "warning"):
        words = _instruction_text(out[name])
        assert MARK not in words.lower(), (name, out[name])
        assert not [ln for ln in words.splitlines() if FOREIGN_LINE.match(ln)], (name, out[name])
        assert sum(1 for ln in words.splitlines() if ln.startswith("# ")) <= 1, (name, out[name])
    written = out["AGENTS.md"]
    assert MARK not in written.lower() and "force" not in written.lower(), written
    assert written.count("habitus:rules:begin") == 1 and written.count("habitus:rules:end") == 1
    for item in json.loads(out["mcp get"]):
        if item["type"] == "workflow":
            assert "\n" not in item["use_when"]  # a past prompt: one line (its first), as data
