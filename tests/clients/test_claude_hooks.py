"""The real Claude Code CLI runs habitus' hooks: what the hooks print reaches the model's request.

Claude Code 2.1.332 (pinned in .ci/agent-clients/package.json) talks to the scripted model server
(tests/scripted_model.py, a stand-in for the paid API) in a temporary git repo and config folder.
"""

from __future__ import annotations

import pytest
from tests.clients.conftest import Sandbox, agent_cli, migration_repo
from tests.clients.memory import (
    HANDOVER_HEAD,
    PITFALL_HEAD,
    assert_ingested_without_hand_over,
    existing,
    import_migration_workflow,
    settings_file,
    user_hooks_before,
    warning_names_the_trap,
)

from scripted_model import call, conversation_text, say, scripted_model

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _claude() -> None:
    agent_cli("claude")


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_hand_over_reaches_the_model_and_uninstall_restores_the_settings(sandbox: Sandbox, scope: str) -> None:
    migration_repo(sandbox.repo)
    import_migration_workflow(sandbox)
    if scope == "user":
        user_hooks_before(sandbox)
    path = settings_file(sandbox, scope)
    before = existing(path)
    sandbox.habitus("hooks", "install", "--agent", "claude", "--scope", scope)

    with scripted_model([say("noted")]) as model:
        sandbox.claude("add a phone column to the users table", model.url)
    first = conversation_text(model.agent_requests()[0])
    assert HANDOVER_HEAD in first and "db/migrations.py" in first

    sandbox.habitus("hooks", "uninstall", "--agent", "claude", "--scope", scope)
    assert existing(path) == before  # byte-identical, or absent again when there was no file


def test_pitfall_warning_after_a_failing_command_is_in_the_next_request(sandbox: Sandbox) -> None:
    migration_repo(sandbox.repo)
    import_migration_workflow(sandbox)
    sandbox.habitus("hooks", "install", "--agent", "claude", "--scope", "project")
    script = [call("Bash", command="make test"), call("Bash", command="make test"), say("stopped")]
    with scripted_model(script) as model:
        sandbox.claude("add a phone column to the users table", model.url, "--allowedTools", "Bash")
    requests = [conversation_text(b) for b in model.agent_requests()]
    assert len(requests) == 3
    assert PITFALL_HEAD not in requests[0]
    assert warning_names_the_trap(requests[1])
    # once per trap per session: the second failing `make test` brings no second warning
    assert requests[2].count(PITFALL_HEAD) == 1


def test_compaction_re_injects_the_current_hand_over(sandbox: Sandbox) -> None:
    migration_repo(sandbox.repo)
    import_migration_workflow(sandbox)
    sandbox.habitus("hooks", "install", "--agent", "claude", "--scope", "project")
    with scripted_model([say("noted"), say("continuing")]) as model:
        first = sandbox.claude("add a phone column to the users table", model.url)
        session = first["session_id"]
        sandbox.claude("/compact", model.url, "--resume", session)
        sandbox.claude("go on", model.url, "--resume", session)
    after = conversation_text(model.agent_requests()[-1])
    # the compacted conversation holds only the summary; the hand-over is back through SessionStart(compact)
    assert HANDOVER_HEAD in after and "db/migrations.py" in after
    # the transcript records both hand-overs (prompt, compaction) as attachments: habitus' own, never the task
    (transcript,) = sandbox.claude_transcripts()
    assert_ingested_without_hand_over(sandbox, transcript, "add a phone column to the users table", shown=2)
