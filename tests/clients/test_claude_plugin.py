"""The Claude Code plugin (plugins/habitus) and its marketplace entry (.claude-plugin/marketplace.json).

`claude plugin validate` (the real CLI) passes on both; the plugin installs from this checkout as a
local marketplace into a temporary config folder, and its hooks fire in a scripted session.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from tests.clients.conftest import ROOT, Sandbox, agent_cli, migration_repo
from tests.clients.memory import HANDOVER_HEAD, import_migration_workflow

from scripted_model import conversation_text, say, scripted_model

pytestmark = pytest.mark.slow
PLUGIN = ROOT / "plugins" / "habitus"


def _claude(box: Sandbox, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(agent_cli("claude")), *args], cwd=box.repo, env=box.env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("target", [PLUGIN, ROOT], ids=["plugin", "marketplace"])
def test_claude_plugin_validate_passes_strict(sandbox: Sandbox, target) -> None:
    proc = _claude(sandbox, "plugin", "validate", "--strict", "--json", str(target))
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["success"] is True, proc.stdout[-3000:]
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []


def test_plugin_installs_from_a_local_marketplace_and_its_hooks_fire(sandbox: Sandbox) -> None:
    migration_repo(sandbox.repo)
    import_migration_workflow(sandbox)
    added = _claude(sandbox, "plugin", "marketplace", "add", str(ROOT))
    assert added.returncode == 0, added.stderr + added.stdout
    installed = _claude(sandbox, "plugin", "install", "habitus@habitus")
    assert installed.returncode == 0, installed.stderr + installed.stdout
    listed = _claude(sandbox, "plugin", "list", "--json")
    assert any(p.get("id") == "habitus@habitus" and p.get("enabled") for p in json.loads(listed.stdout))

    with scripted_model([say("noted")]) as model:
        sandbox.claude("add a phone column to the users table", model.url)
    first = conversation_text(model.agent_requests()[0])
    assert HANDOVER_HEAD in first and "db/migrations.py" in first
    assert not (sandbox.claude_dir / "settings.json").read_text().count("habitus hook")  # hooks came from the plugin
