"""Memory the real-client tests start from: a workflow file imported with `habitus workflows import`.

The workflow is the one a real session in `migration_repo` teaches (see test_learning.py, which
learns it from the CLIs' own transcripts); importing it lets the delivery tests start at a known
memory without first playing a teaching session.
"""

from __future__ import annotations

from pathlib import Path

from tests.clients.conftest import Sandbox

HANDOVER_HEAD = "# habitus: what earlier runs learned for this task"
PITFALL_HEAD = "habitus pitfall warning"
PITFALL_TEXT = "`make test` fails before `make migrate`"
PITFALL_SEEN = "no such column"  # in the warning whether the trap is shown vetted or quoted as data

MIGRATION_WORKFLOW = f"""\
format: 1
id: wf-users-column
name: Add a users column
use_when: 'Tasks like: add an email column to the users table'
intent: change
cues:
  any:
  - users table
steps:
- do: Append the migration to `MIGRATIONS`
  place:
    file: db/migrations.py
checks:
- make migrate && make test
pitfalls:
- text: '{PITFALL_TEXT} ({PITFALL_SEEN}); run `make migrate && make test` instead.'
  trigger:
    'on': command
    all:
    - make test
    none:
    - migrate
"""


def warning_names_the_trap(request_text: str) -> bool:
    """Whether the request holds the trap warning and it names the fix (`make migrate`), vetted or quoted."""
    at = request_text.find(PITFALL_HEAD)
    return at >= 0 and "make migrate" in request_text[at:at + 600] and PITFALL_SEEN in request_text[at:at + 600]


def import_migration_workflow(box: Sandbox) -> None:
    path = box.root / "wf-users-column.yaml"
    path.write_text(MIGRATION_WORKFLOW)
    box.habitus("workflows", "import", str(path), "--repo", str(box.repo))


def user_hooks_before(box: Sandbox) -> bytes:
    """A user settings file with the person's own content, to check that uninstall restores it byte for byte."""
    path = box.claude_dir / "settings.json"
    path.write_bytes(b'{\n  "env": {"FOO": "1"},\n  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
                     b'[{"type": "command", "command": "true"}]}]}\n}\n')
    return path.read_bytes()


def settings_file(box: Sandbox, scope: str) -> Path:
    if scope == "user":
        return box.claude_dir / "settings.json"
    return box.repo / ".claude" / ("settings.json" if scope == "project" else "settings.local.json")


def existing(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None



def assert_ingested_without_hand_over(box: Sandbox, transcript: Path, task: str, shown: int) -> None:
    """`habitus ingest` of a transcript that got hand-overs: `shown` of them are habitus' system steps, the task
    and every user or summary step are free of them."""
    import json

    box.habitus("ingest", str(transcript))
    (trace,) = json.loads(box.habitus("traces", "list", "--json").stdout)
    steps = json.loads(box.habitus("traces", "show", trace["id"], "--json").stdout)["steps"]
    assert trace["task"] == task
    assert sum(HANDOVER_HEAD in s["text"] for s in steps if s["meta"].get("injected") == "habitus") == shown
    assert not any("habitus" in s["text"] for s in steps if s["kind"] in ("user", "summary"))
