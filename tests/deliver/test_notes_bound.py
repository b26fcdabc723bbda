"""Notes are bounded where they are written (MCP tool, CLI, store) and an oversized stored note cannot stall
promotion (issue 12, finding 15: a 20 MB MCP note made `promote` run for more than 7 minutes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backends import connect
from habitus.capture.subject import repo_subject

from .test_mcp import _session

MAX = 4_000


def test_a_note_longer_than_the_bound_is_refused_and_nothing_is_stored(repo: Path) -> None:
    from habitus.store.notes import NoteError, add_note, list_notes

    conn = connect()
    with pytest.raises(NoteError, match=r"at most 4,000 characters and this one has 20,000,000") as err:
        add_note(conn, "x" * 20_000_000, kind="gotcha", subject=repo_subject(repo), source="agent")
    assert "\n" not in str(err.value)
    assert list_notes(conn, subject=repo_subject(repo)) == []
    assert add_note(conn, "y" * MAX, kind="gotcha").text == "y" * MAX  # the bound itself is allowed


def test_notes_add_cli_refuses_an_oversized_note_in_one_line(repo: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "habitus", "notes", "add", "z" * (MAX + 1)], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "at most 4,000 characters" in done.stderr


def test_mcp_note_tool_refuses_an_oversized_note(repo: Path) -> None:
    from habitus.store.notes import list_notes

    async def steps(client: Any) -> Any:
        return await client.call_tool("note", {"text": "w" * (MAX + 1), "kind": "gotcha"})

    result = _session(repo, steps)
    assert result.is_error
    assert list_notes(connect(), subject=repo_subject(repo)) == []


def test_an_oversized_note_stored_earlier_is_read_bounded_by_promotion(repo: Path) -> None:
    """A 20 MB note written before the bound existed: promotion reads a bounded prefix and proposes nothing."""
    from habitus.deliver.candidates import MAX_CANDIDATE_CHARS, from_notes
    from habitus.deliver.promote import propose
    from habitus.store.notes import add_note

    conn = connect()
    note = add_note(conn, "placeholder", kind="gotcha", subject=repo_subject(repo), source="agent")
    conn.execute("UPDATE notes SET text = ? WHERE id = ?", ("Beware the cache. " * 1_200_000, note.id))
    [cand] = from_notes(conn, repo_subject(repo))
    assert len(cand.text) == MAX_CANDIDATE_CHARS
    proposal = propose(conn, repo / "AGENTS.md")
    assert proposal.additions == []
    assert json.dumps(proposal.to_dict())  # the proposal is a normal document


def test_wrap_rule_stops_reading_once_the_rule_is_too_long() -> None:
    from habitus.deliver.promote import wrap_rule

    lines = wrap_rule("word " * 4_000_000, 100, max_lines=3)
    assert len(lines) == 4 and all(len(line) <= 100 for line in lines)
    assert wrap_rule("y" * 20_000_000, 100, max_lines=3) == ["y" * 100] * 4
