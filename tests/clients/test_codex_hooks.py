"""The real Codex CLI runs habitus' hooks: what they print reaches the model's request.

Codex 0.171 (pinned in .ci/agent-clients/package.json) runs a hook only once a person trusted it
(`/hooks` in the TUI stores the hook's hash); these runs pass `--dangerously-bypass-hook-trust`
in its place. A project's `.codex/` layer (hooks.json, config.toml) loads only in a trusted
project: `codex exec --trust` saves that trust, as the person would.
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
    warning_names_the_trap,
)

from scripted_model import call, conversation_text, say, scripted_model

pytestmark = pytest.mark.slow
TRUSTED_HOOKS = "--dangerously-bypass-hook-trust"  # stands in for the person's review in /hooks


@pytest.fixture(autouse=True)
def _codex() -> None:
    agent_cli("codex")


def _hooks_file(box: Sandbox, scope: str):
    return box.codex_home / "hooks.json" if scope == "user" else box.repo / ".codex" / "hooks.json"


@pytest.mark.parametrize("scope", ["user", "project"])
def test_hand_over_and_pitfall_warning_reach_the_model(sandbox: Sandbox, scope: str) -> None:
    migration_repo(sandbox.repo)
    import_migration_workflow(sandbox)
    path = _hooks_file(sandbox, scope)
    before = existing(path)
    sandbox.habitus("hooks", "install", "--agent", "codex", "--scope", scope)
    script = [call("exec_command", cmd="make test"), call("exec_command", cmd="make test"), say("stopped")]
    with scripted_model(script) as model:
        trust = ["--trust"] if scope == "project" else []
        sandbox.codex("add a phone column to the users table", model.url, TRUSTED_HOOKS, *trust)
    requests = [conversation_text(b) for b in model.agent_requests()]
    assert len(requests) == 3
    assert HANDOVER_HEAD in requests[0] and "db/migrations.py" in requests[0]
    assert PITFALL_HEAD not in requests[0]
    assert warning_names_the_trap(requests[1])
    assert requests[2].count(PITFALL_HEAD) == 1  # once per trap per session

    sandbox.habitus("hooks", "uninstall", "--agent", "codex", "--scope", scope)
    assert existing(path) == before


def test_project_hooks_wait_for_the_project_to_be_trusted(sandbox: Sandbox) -> None:
    migration_repo(sandbox.repo)
    import_migration_workflow(sandbox)
    sandbox.habitus("hooks", "install", "--agent", "codex", "--scope", "project")
    with scripted_model([say("ok"), say("ok")]) as model:
        sandbox.codex("add a phone column to the users table", model.url, TRUSTED_HOOKS)
        untrusted = conversation_text(model.agent_requests()[-1])
        sandbox.codex("add a phone column to the users table", model.url, TRUSTED_HOOKS, "--trust")
        trusted = conversation_text(model.agent_requests()[-1])
    assert HANDOVER_HEAD not in untrusted
    assert HANDOVER_HEAD in trusted


def test_auto_compaction_re_injects_the_current_hand_over(sandbox: Sandbox) -> None:
    migration_repo(sandbox.repo)
    import_migration_workflow(sandbox)
    sandbox.habitus("hooks", "install", "--agent", "codex", "--scope", "user")
    script = [call("exec_command", cmd="echo " + "x" * 50), call("exec_command", cmd="echo y"), say("done")]
    with scripted_model(script) as model:  # a low token limit makes Codex compact in the middle of the turn
        sandbox.codex("add a phone column to the users table", model.url, TRUSTED_HOOKS,
                      config="model_auto_compact_token_limit = 5000")
    requests = [conversation_text(b) for b in model.agent_requests()]
    compacted = [r for r in requests if "summary produced by the other language model" in r]
    assert compacted, "Codex did not compact"
    # after compaction the conversation is the summary; the hand-over is back through SessionStart(compact)
    assert all(HANDOVER_HEAD in r and "db/migrations.py" in r for r in compacted)
    # the rollout records each hand-over as a developer message: habitus' own, never the task
    (rollout,) = sandbox.codex_rollouts()
    assert_ingested_without_hand_over(sandbox, rollout, "add a phone column to the users table",
                                      shown=1 + len(compacted))
