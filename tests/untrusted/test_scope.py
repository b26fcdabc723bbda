"""Places and scope (issue 21 §3): what habitus reads, hands over and writes stays in this repository.

- A place is never read through a link to `.git/`, to a git-ignored file or out of the tree, though the
  link itself is tracked and arrives through an imported workflow.
- The MCP tools act only on this repo's memory (plus the user's global notes): another repository's note
  or workflow id is unknown to `get`, `feedback` and `archive`.
- `promote --apply` never writes through a symlinked CLAUDE.md / AGENTS.md into a file outside the repo.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.workflow import Cues, Workflow
from habitus.store.memory import get_workflow, save_workflows

from .conftest import git, make_repo

GIT_CANARY = "GITCONFIG-CANARY-91b2"
ENV_CANARY = "ENV-CANARY-77c1"
BUILD_CANARY = "BUILD-CANARY-5e0d"
TREE_TEXT = "tracked notes for the linked files\n"


@pytest.fixture
def linked(repo: Path) -> Path:
    """A repo with tracked links: to .git/config, to a git-ignored .env and build/out.txt, to .git as a
    folder, and (the control) to a tracked file."""
    with (repo / ".git" / "config").open("a") as fh:
        fh.write(f"[canary]\n\ttoken = {GIT_CANARY}\n")
    (repo / ".gitignore").write_text(".env\nbuild/\n")
    (repo / ".env").write_text(f"FEATURE_FLAG = {ENV_CANARY}\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text(f"{BUILD_CANARY}\n")
    (repo / "notes.txt").write_text(TREE_TEXT)
    for name, target in (("linkcfg", ".git/config"), ("linkenv", ".env"), ("linkbuild", "build/out.txt"),
                         ("gitdir", ".git"), ("linkok", "notes.txt")):
        (repo / name).symlink_to(target)
    git(repo, "add", ".gitignore", "notes.txt", "linkcfg", "linkenv", "linkbuild", "gitdir", "linkok")
    git(repo, "commit", "-q", "-m", "links")
    return repo


WORKFLOW = """\
id: wf-links
name: update the linked files
cues: {any: [linked files]}
steps:
  - {do: Read the settings, place: {file: %s}}
  - {do: Read the notes, place: {file: linkok}}
"""


@pytest.mark.parametrize(("place", "canary"), [("linkcfg", GIT_CANARY), ("linkenv", ENV_CANARY),
                                               ("linkbuild", BUILD_CANARY), ("gitdir/config", GIT_CANARY)])
def test_a_tracked_link_to_git_or_an_ignored_file_is_never_handed(linked: Path, tmp_path: Path, place: str,
                                                                  canary: str) -> None:
    from habitus.deliver.events import prompt_submit
    from habitus.learn.files import import_file
    from habitus.recall.api import recall

    path = tmp_path / "shared.yaml"
    path.write_text(WORKFLOW % place)
    import_file(connect(), path, subject=repo_subject(linked), root=linked)
    result = recall("update the linked files", cwd=linked)
    hook = prompt_submit({"session_id": "x", "cwd": str(linked), "prompt": "update the linked files"})
    everything = result.text + json.dumps(result.to_dict()) + json.dumps(hook)
    assert canary not in everything and "repositoryformatversion" not in everything
    assert TREE_TEXT.strip() in result.text  # a link to a tracked file in the tree is still handed over
    assert result.to_dict()["selected"][0]["steps"] == [2]


def test_a_link_is_refused_wherever_memory_names_it(linked: Path) -> None:
    """Learned or stored memory reaches the same check as an import: validation itself refuses the link."""
    from habitus.core.workflow import Place, WorkflowStep
    from habitus.recall.validate import validate

    wf = Workflow(id="wf-l", name="l", steps=[WorkflowStep(do="x", place=Place(file=f)) for f in
                                               ("linkenv", "linkcfg", "linkbuild", "linkok")])
    steps = validate([wf], {"wf-l": [1, 2, 3, 4]}, linked)["wf-l"].steps
    assert [steps[n].status for n in (1, 2, 3)] == ["stale"] * 3
    assert all(not steps[n].excerpt for n in (1, 2, 3))
    assert steps[4].status == "ok" and steps[4].excerpt == [TREE_TEXT.strip()]


# --- MCP scope ----------------------------------------------------------------------------------------------


def _mcp(cwd: Path, steps: Any) -> Any:
    from mcp import Client, StdioServerParameters

    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "habitus", "mcp"], cwd=str(cwd),
                                       env={"HABITUS_HOME": os.environ["HABITUS_HOME"],
                                            "PATH": os.environ.get("PATH", ""),  # the code under test, too:
                                            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}})
        async with Client(params, read_timeout_seconds=60) as client:
            return await steps(client)

    return anyio.run(main)


def test_mcp_tools_never_act_on_another_repositorys_memory(repo: Path, tmp_path: Path) -> None:
    from habitus.store.notes import add_note, feedback_counts, get_note

    (tmp_path / "other").mkdir()
    other = make_repo(tmp_path / "other", "# other\n")
    conn = connect()
    theirs = add_note(conn, "Their release process: tag and push", kind="convention", subject=repo_subject(other))
    save_workflows(conn, repo_subject(other), [Workflow(id="wf-theirs", name="their release", cues=Cues(any=["x"]))])
    mine = add_note(conn, "Our release process: tag only", kind="convention", subject=repo_subject(repo))
    everywhere = add_note(conn, "Prefer ripgrep over grep", kind="convention")
    conn.close()

    async def steps(client: Any) -> dict[str, Any]:
        out = {}
        for tool, args in (("get", {}), ("archive", {"reason": "done"}), ("feedback", {"verdict": "wrong"})):
            for item in (theirs.id, "wf-theirs"):
                out[f"{tool}:{item}"] = await client.call_tool(tool, {"id": item, **args})
        out["get:mine"] = await client.call_tool("get", {"id": mine.id})
        out["get:global"] = await client.call_tool("get", {"id": everywhere.id})
        out["feedback:global"] = await client.call_tool("feedback", {"id": everywhere.id, "verdict": "helpful"})
        return out

    out = _mcp(repo, steps)
    for key in [k for k in out if "theirs" in k or theirs.id in k]:
        assert out[key].is_error, key
        assert "Their release" not in out[key].content[0].text
    assert not out["get:mine"].is_error and not out["get:global"].is_error
    assert not out["feedback:global"].is_error
    conn = connect()
    assert get_note(conn, theirs.id).state == "active"  # the cross-repo archive no longer happens
    assert get_workflow(conn, "wf-theirs").status == "active"
    assert feedback_counts(conn, theirs.id).get("wrong", 0) == 0
    assert get_workflow(conn, "wf-theirs").counters.misled == 0


def test_mcp_rules_and_get_of_a_rule_are_this_repos(repo: Path, tmp_path: Path) -> None:
    from habitus.deliver.candidates import Candidate
    from habitus.deliver.mcp_server import get_item
    from habitus.deliver.promote import apply, propose
    from habitus.store.notes import list_rule_states

    (tmp_path / "other").mkdir()
    other = make_repo(tmp_path / "other", "# other\n")
    conn = connect()
    (other / "AGENTS.md").write_text("# Agents\n")
    apply(conn, propose(conn, other / "AGENTS.md", candidates=[Candidate(  # a rule: 3 tasks in 2 sessions, harm
        id="c1", text="Regenerate stubs after editing api.proto.", source="pitfall", session_ids={"a", "b"},
        tasks=3, tokens_cost=3000)]))
    [rule_id] = [r.id for r in list_rule_states(conn)]
    conn.close()
    assert get_item(rule_id, cwd=other)["type"] == "rule"
    with pytest.raises(ValueError, match="no memory item"):
        get_item(rule_id, cwd=repo)


# --- promote through a link ---------------------------------------------------------------------------------


def _evidence(repo: Path) -> None:
    from habitus.core.workflow import Pitfall, Trigger

    conn = connect()
    save_workflows(conn, repo_subject(repo), [Workflow(id="wf-a", name="a", pitfalls=[Pitfall(
        text="Regenerate the stubs after editing the proto files: the build reads the old ones.",
        trigger=Trigger(on="command", all=["pytest"]),
        evidence={"session_ids": ["s1", "s2", "s3"], "tokens_cost": 5000, "failures": 3})])])
    conn.close()


@pytest.mark.parametrize("name", ["CLAUDE.md", "AGENTS.md"])
def test_promote_never_writes_through_a_link_to_a_file_outside_the_repo(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    from deliver.test_cli import habitus_inproc
    from habitus.deliver.promote import PromoteError, apply, propose

    _evidence(repo)
    outside = tmp_path / "dot-claude" / "CLAUDE.md"  # a stand-in for the global ~/.claude/CLAUDE.md
    outside.parent.mkdir()
    outside.write_text("# My global instructions\n")
    (repo / name).symlink_to(outside)
    done = habitus_inproc("promote", "--apply", "--target", name, cwd=repo, monkeypatch=monkeypatch)
    assert done.returncode == 1 and "outside the repository" in done.stderr, (done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1
    assert outside.read_text() == "# My global instructions\n"
    assert (repo / name).is_symlink() and not list(outside.parent.glob("*.habitus-backup"))
    conn = connect()
    with pytest.raises(PromoteError, match="outside the repository"):
        apply(conn, propose(conn, repo / name))
    assert outside.read_text() == "# My global instructions\n"


def test_promote_writes_through_a_link_inside_the_repo(repo: Path) -> None:
    from habitus.deliver.promote import apply, propose

    _evidence(repo)
    (repo / "AGENTS.md").write_text("# Agents\n")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    conn = connect()
    apply(conn, propose(conn, repo / "CLAUDE.md"))
    assert (repo / "CLAUDE.md").is_symlink() and "Regenerate the stubs" in (repo / "AGENTS.md").read_text()


def test_promote_refuses_a_link_swapped_after_the_proposal(repo: Path, tmp_path: Path) -> None:
    from habitus.deliver.promote import PromoteError, apply, propose

    _evidence(repo)
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# elsewhere\n")
    (repo / "AGENTS.md").write_text("# elsewhere\n")
    conn = connect()
    proposal = propose(conn, repo / "AGENTS.md")
    (repo / "AGENTS.md").unlink()
    (repo / "AGENTS.md").symlink_to(outside)  # same text, so the content check alone would pass
    with pytest.raises(PromoteError, match="outside the repository"):
        apply(conn, proposal)
    assert outside.read_text() == "# elsewhere\n"


def test_mcp_search_outside_a_repo_sees_only_global_notes(repo: Path, tmp_path: Path) -> None:
    from habitus.deliver.mcp_server import get_item, search_items
    from habitus.store.notes import add_note

    conn = connect()
    theirs = add_note(conn, "Release notes go in CHANGES.md", kind="convention", subject=repo_subject(repo))
    everywhere = add_note(conn, "Release branches are cut on Mondays", kind="convention")
    conn.close()
    plain = tmp_path / "plain"
    plain.mkdir()
    for scope in (None, "all", "repo", "global"):
        ids = [r["id"] for r in search_items("release", cwd=plain, scope=scope)]
        assert theirs.id not in ids, scope
    assert [r["id"] for r in search_items("release", cwd=plain)] == [everywhere.id]
    assert get_item(everywhere.id, cwd=plain)["type"] == "note"
    with pytest.raises(ValueError, match="no memory item"):
        get_item(theirs.id, cwd=plain)
