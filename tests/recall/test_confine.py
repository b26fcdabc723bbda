"""Places stay inside the work tree: a path from memory or a workflow file can never make habitus read or show
a file outside the repository (issue 12, finding 9), at import, at learn and at render; excerpts are redacted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends import connect
from habitus.core.workflow import Workflow
from habitus.learn.files import WorkflowFileError, import_file
from habitus.recall.api import recall
from habitus.recall.validate import check_state
from habitus.store.memory import load_workflows

from .conftest import git, shortcut_workflow, store_workflows, write

CANARY = "PRIVATE-KEY-CANARY-3f9a"
TASK = "Add a keyboard shortcut Ctrl+E for `export`"


@pytest.fixture
def secret_home(shortcut_repo: Path) -> Path:
    """A private key next to the repo, as `~/.ssh` would be: `../fakehome/.ssh/id_ed25519` from the repo root."""
    home = shortcut_repo.parent / "fakehome"
    write(home, ".ssh/id_ed25519", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{CANARY}\n"
                                   "-----END OPENSSH PRIVATE KEY-----\n")
    write(shortcut_repo, ".git/config-copy", "")  # a file inside .git exists, as `.git/config` does
    return home


def _hostile(place_file: str) -> Workflow:
    wf = shortcut_workflow(None)
    wf.steps[0].place.file = place_file  # type: ignore[union-attr]
    wf.steps[0].place.chain = []  # type: ignore[union-attr]
    return wf


HOSTILE_PLACES = ["../fakehome/.ssh/id_ed25519", "src/../../fakehome/.ssh/id_ed25519", "{home}/.ssh/id_ed25519",
                  "~/.ssh/id_ed25519", ".git/config", "src\\..\\..\\fakehome\\.ssh\\id_ed25519"]


@pytest.mark.parametrize("place", HOSTILE_PLACES)
def test_a_place_outside_the_repo_is_never_read_or_shown(shortcut_repo: Path, secret_home: Path, place: str) -> None:
    """As if such a workflow had been stored before import checked places: recall still refuses it."""
    store_workflows(shortcut_repo, [_hostile(place.format(home=secret_home))])
    result = recall(TASK, cwd=shortcut_repo)
    everything = result.text + json.dumps(result.to_dict())
    assert CANARY not in everything and "OPENSSH" not in everything
    assert "step 1: place is outside the repository" in result.text
    assert 1 not in result.to_dict()["selected"][0]["steps"]  # the other steps are still handed over
    assert result.to_dict()["selected"][0]["steps"] == [2, 3]


def test_a_tracked_symlink_out_of_the_tree_is_refused(shortcut_repo: Path, secret_home: Path) -> None:
    (shortcut_repo / "src/app/keys.pem").symlink_to(secret_home / ".ssh/id_ed25519")
    git(shortcut_repo, "add", "src/app/keys.pem")
    git(shortcut_repo, "commit", "-q", "-m", "link")
    store_workflows(shortcut_repo, [_hostile("src/app/keys.pem")])
    result = recall(TASK, cwd=shortcut_repo)
    assert CANARY not in result.text + json.dumps(result.to_dict())
    assert "outside the repository" in result.text


def test_a_hostile_place_reaches_no_agent_through_the_hook(shortcut_repo: Path, secret_home: Path) -> None:
    from habitus.deliver.events import prompt_submit

    store_workflows(shortcut_repo, [_hostile("../fakehome/.ssh/id_ed25519")])
    out = prompt_submit({"session_id": "s1", "cwd": str(shortcut_repo), "prompt": TASK})
    assert out is not None and CANARY not in json.dumps(out)


@pytest.mark.parametrize("place", HOSTILE_PLACES)
def test_import_refuses_a_place_outside_the_repo_and_stores_nothing(shortcut_repo: Path, secret_home: Path,
                                                                    place: str) -> None:
    file = json.dumps(place.format(home=secret_home))
    doc = f"id: wf-x\nname: x\nsteps:\n  - do: read it\n    place: {{file: {file}}}\n"
    path = shortcut_repo.parent / "shared.yaml"
    path.write_text(doc)
    conn = connect()
    with pytest.raises(WorkflowFileError, match="step 1 `place.file` is .*; a place is a path inside the repository"):
        import_file(conn, path, subject="root1")
    assert load_workflows(conn, status=None) == []


def test_workflows_import_cli_is_one_line_and_exit_1(shortcut_repo: Path, secret_home: Path) -> None:
    import subprocess
    import sys

    path = shortcut_repo.parent / "shared.yaml"
    path.write_text("id: wf-x\nname: x\nsteps: [{do: read, place: {file: ../fakehome/.ssh/id_ed25519}}]\n")
    done = subprocess.run([sys.executable, "-m", "habitus", "workflows", "import", str(path), "--repo",
                           str(shortcut_repo)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "leaves the repository" in done.stderr


def test_learning_keeps_no_place_outside_the_repo(shortcut_repo: Path, secret_home: Path) -> None:
    from habitus.core.trace import Step, StepKind, ToolCall, Trace
    from habitus.learn.records import record_from_trace

    key = str(secret_home / ".ssh/id_ed25519")
    steps = [Step(kind=StepKind.TOOL, tool=ToolCall(name=name, input=inp, output="ok"))
             for name, inp in [("Read", {"file_path": key}),
                               ("Edit", {"file_path": key, "old_string": CANARY, "new_string": "x"}),
                               ("Edit", {"file_path": str(shortcut_repo / "../fakehome/.ssh/id_ed25519"),
                                         "old_string": CANARY, "new_string": "y"}),
                               ("Edit", {"file_path": str(shortcut_repo / "src/app/keymap.py"),
                                         "old_string": '"ctrl+o": "open",', "new_string": '"ctrl+e": "export",'})]]
    rec = record_from_trace(Trace(id="t1", source_format="claude", agent="claude-code", cwd=str(shortcut_repo),
                                  steps=steps),
                            repo=shortcut_repo)
    assert rec.files_edited == ["src/app/keymap.py"]
    assert rec.reads_before_edit == []
    assert CANARY not in json.dumps(rec.to_dict())


def test_excerpts_are_redacted(shortcut_repo: Path) -> None:
    secret = "sk-proj-" + "Ab3" * 16
    path = shortcut_repo / "src/app/keymap.py"
    path.write_text(path.read_text().replace('self.extra = {}', f'self.extra = {{}}\n        API_KEY = "{secret}"'))
    store_workflows(shortcut_repo, [Workflow.from_dict({**shortcut_workflow(None).to_dict(), "steps": [
        {"do": "Set the key", "place": {"file": "src/app/keymap.py", "chain": ["def __init__(self):"]}}]})])
    result = recall(TASK, cwd=shortcut_repo)
    assert "def __init__(self):" in result.text and "API_KEY" in result.text
    assert secret not in result.text


@pytest.mark.parametrize(("command", "reason"), [
    ("cd ../.. && make test", "outside the repository"),
    ("cd /etc && npm test", "outside the repository"),
])
def test_a_check_that_leaves_the_repo_is_stale(shortcut_repo: Path, command: str, reason: str) -> None:
    state = check_state(command, shortcut_repo)
    assert state.stale and reason in (state.reason or "")


def test_package_json_linked_out_of_the_tree_is_not_read(shortcut_repo: Path, secret_home: Path) -> None:
    write(secret_home, "package.json", json.dumps({"scripts": {"secret-build": "x"}}))
    (shortcut_repo / "package.json").symlink_to(secret_home / "package.json")
    assert check_state("npm run secret-build", shortcut_repo).reason == "package.json no longer exists"


@pytest.mark.parametrize(("path", "clean"), [
    ("src/app.py", "src/app.py"), ("./src//app.py", "src/app.py"), ("../x", None), ("a/../../x", None),
    ("/etc/passwd", None), ("~/.ssh/id_rsa", None), ("C:/x", None), ("a\\b", None), (".git/config", None),
    ("src/.git/hooks/x", None), ("", None), ("a\x00b", None), (".", None), ("src/.gitignore", "src/.gitignore"),
])
def test_repo_relative_paths(path: str, clean: str | None) -> None:
    from habitus.core.paths import repo_relative

    assert repo_relative(path) == clean
