"""Fixtures for the real-client tests: the pinned agent CLIs, driven by the scripted model server.

The CLIs come from `.agent-clients/` (installed by `.ci/install-agent-clients` from the pins in
`.ci/agent-clients/package.json`; `HABITUS_AGENT_CLIENTS` names another folder). Every run gets a
temporary HOME, CLAUDE_CONFIG_DIR, CODEX_HOME and HABITUS_HOME and an environment built from
nothing, so no test reads or writes ~/.claude, ~/.codex or ~/.habitus of this machine, and no API
key of this machine reaches a client. The model is `tests/scripted_model.py`, a stand-in for the
paid API on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.deliver.conftest import git, make_repo

ROOT = Path(__file__).resolve().parents[2]
PINS: dict[str, str] = json.loads((ROOT / ".ci" / "agent-clients" / "package.json").read_text())["dependencies"]
PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "copilot": "@github/copilot"}
STUB_KEY = "sk-scripted-model-stand-in"  # not a key: the scripted server accepts anything
# With a key and no base URL, even `claude plugin …` calls api.anthropic.com (17 s to time out here);
# commands that need no model get this closed loopback port instead.
NO_MODEL_URL = "http://127.0.0.1:9"
CODEX_MODEL = "gpt-5.5"  # a model Codex 0.171 knows: it offers exec_command and the freeform apply_patch tool


def clients_dir() -> Path:
    return Path(os.environ.get("HABITUS_AGENT_CLIENTS") or ROOT / ".agent-clients")


def agent_cli(name: str) -> Path:
    """The pinned CLI's executable, or a skip that says what is missing and how to get it."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node or npm is not installed, so the real agent CLIs cannot be installed or run here")
    package = PACKAGES[name]
    exe = clients_dir() / "node_modules" / ".bin" / name
    manifest = clients_dir() / "node_modules" / package / "package.json"
    if not exe.exists() or not manifest.is_file():
        pytest.skip(f"{package} is not installed in {clients_dir()}; run .ci/install-agent-clients (npm)")
    version = json.loads(manifest.read_text()).get("version")
    if version != PINS[package]:
        pytest.skip(f"{package} {version} is installed, the tests pin {PINS[package]}; "
                    "run .ci/install-agent-clients")
    return exe


@dataclass
class Sandbox:
    """A temporary machine for one agent: HOME, config folders, habitus home and a git repo."""

    root: Path
    habitus_home: Path
    repo: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def claude_dir(self) -> Path:
        return Path(self.env["CLAUDE_CONFIG_DIR"])

    @property
    def codex_home(self) -> Path:
        return Path(self.env["CODEX_HOME"])

    def habitus(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        """Run the `habitus` on the sandbox PATH (this checkout's console script), as a user would."""
        return subprocess.run(["habitus", *args], cwd=cwd or self.repo, env=self.env, capture_output=True,
                              text=True, timeout=120, check=check)

    def claude(self, prompt: str, model_url: str, *args: str, cwd: Path | None = None,
               timeout: float = 180) -> dict[str, Any]:
        """`claude -p PROMPT --output-format json` against the scripted model; the parsed result document."""
        env = {**self.env, "ANTHROPIC_BASE_URL": model_url}
        proc = subprocess.run([str(agent_cli("claude")), "-p", prompt, "--output-format", "json", *args],
                              cwd=cwd or self.repo, env=env, capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, f"claude exited {proc.returncode}: {proc.stderr[-2000:]} {proc.stdout[-2000:]}"
        return json.loads(proc.stdout)

    def codex_config(self, model_url: str, top: str = "") -> None:
        """Point Codex at the scripted model (a `responses` provider); keeps what else config.toml holds.

        `top`: more top-level keys (lines) for this run."""
        path = self.codex_home / "config.toml"
        text = path.read_text() if path.exists() else ""
        # optional MCP servers get a short grace period before the first turn; this shared machine can be
        # slower than that to start `habitus mcp`, so the tests wait as long as a server may take
        head = (f'model = "{CODEX_MODEL}"\nmodel_provider = "scripted"\nmcp_optional_startup_grace_ms = 30000\n{top}\n'
                f'[model_providers.scripted]\nname = "scripted model (stand-in for the paid API)"\n'
                f'base_url = "{model_url}/v1"\nwire_api = "responses"\nenv_key = "SCRIPTED_MODEL_KEY"\n\n')
        marker = "# habitus-tests:provider-end\n"
        rest = text.split(marker, 1)[1] if marker in text else text
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(head + marker + rest)

    def codex(self, prompt: str, model_url: str, *args: str, cwd: Path | None = None, config: str = "",
              timeout: float = 180) -> subprocess.CompletedProcess:
        """`codex exec PROMPT` (full access, no approvals) against the scripted model; `config`: top-level keys."""
        self.codex_config(model_url, config)
        proc = subprocess.run([str(agent_cli("codex")), "exec", "-s", "danger-full-access", *args, prompt],
                              cwd=cwd or self.repo, env=self.env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"codex exited {proc.returncode}: {proc.stderr[-3000:]}"
        return proc

    def claude_transcripts(self) -> list[Path]:
        return sorted((self.claude_dir / "projects").glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime)

    def codex_rollouts(self) -> list[Path]:
        return sorted((self.codex_home / "sessions").glob("**/rollout-*.jsonl"), key=lambda p: p.stat().st_mtime)

    def hooks_log(self) -> str:
        path = self.habitus_home / "logs" / "hooks.log"
        return path.read_text() if path.exists() else ""


def _path_dirs() -> str:
    """The sandbox PATH: this checkout's habitus (the venv's bin) first, then git, bash and node."""
    dirs = [str(Path(sys.executable).parent)]
    for tool in ("git", "bash", "node", "make"):
        found = shutil.which(tool)
        if found and str(Path(found).parent) not in dirs:
            dirs.append(str(Path(found).parent))
    return os.pathsep.join(dirs + ["/usr/bin", "/bin"])


@pytest.fixture
def sandbox(tmp_path: Path, habitus_home: Path) -> Sandbox:
    """A fresh HOME (with ~/.claude and ~/.codex inside it), habitus home and git repo, and no inherited secrets."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir(parents=True)
    env = {
        "PATH": _path_dirs(), "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb",
        "TMPDIR": str(tmp_path), "HABITUS_HOME": str(habitus_home), "HABITUS_LLM": "none",
        # the suite's generous hook budget (tests/conftest.py): the agent's hooks may be slow here, never silent
        "HABITUS_HOOK_BUDGET_S": os.environ["HABITUS_HOOK_BUDGET_S"],
        "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / ".codex"),
        "ANTHROPIC_API_KEY": STUB_KEY, "ANTHROPIC_BASE_URL": NO_MODEL_URL, "SCRIPTED_MODEL_KEY": STUB_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return Sandbox(root=tmp_path, habitus_home=habitus_home, repo=make_repo(tmp_path), env=env)


def wait_for(condition: Callable[[], Any], timeout: float = 180, what: str = "condition") -> Any:
    """Poll until `condition()` is truthy (the session-end ingest runs detached from the agent)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.2)


MIGRATION_REPO_MAKEFILE = (
    "migrate:\n\ttouch .migrated\n"
    "test:\n\t@test -f .migrated || (echo 'sqlite3.OperationalError: no such column: users.email'; exit 1)\n"
    "\t@echo '3 passed'\n"
)


def migration_repo(repo: Path) -> Path:
    """A repo with the recurring trap: `make test` fails until `make migrate` ran (like a real schema change)."""
    (repo / "db").mkdir()
    (repo / "db" / "migrations.py").write_text("MIGRATIONS = []\n")
    (repo / "Makefile").write_text(MIGRATION_REPO_MAKEFILE)
    (repo / ".gitignore").write_text(".migrated\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "db")
    return repo
