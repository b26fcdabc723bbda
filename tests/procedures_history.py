"""A generated history with known counts (issue 20): a small Python CLI repo and 12 Claude Code sessions of 3 kinds.

- 4 sessions each add a CLI command the same way (`tool/cli.py` › `COMMANDS`, a `cmd_<name>` function,
  `docs/commands.md`), checked with `python -m pytest -q tests/test_cli.py`;
- 4 add a config option (`tool/config.py` › `class Config`, `load_config`, `docs/config.md`), checked with
  `python -m pytest -q tests/test_config.py`; in the first 3 of them that check first fails with
  "ModuleNotFoundError: No module named 'tool'" and passes after `pip install -e .` (a trap: 3 tasks, 3 sessions);
- 4 fix the date parser (`tool/dates.py` › `FORMATS`, a test in `tests/test_dates.py`), each red-green:
  `python -m pytest -q tests/test_dates.py` fails on the new test, the format is added, it passes (no trap).

Sessions are played in the order command, config, dates, … on consecutive days, each committed. The repo's
CLAUDE.md says to run `python -m pytest -q` (so that rule is never proposed).
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from habitus.bench.fixture_traces import ClaudeSession, numbered

BASE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
FILES = {
    "pyproject.toml": '[project]\nname = "tool"\nversion = "0.1.0"\n',
    "CLAUDE.md": "# tool\n\nRun `python -m pytest -q` before committing.\n",
    "tool/__init__.py": "",
    "tool/cli.py": 'import sys\n\n\ndef cmd_list(args):\n    """List the items."""\n    return 0\n\n\n'
                   'COMMANDS = {\n    "list": cmd_list,\n}\n\n\ndef main(argv=None):\n    argv = argv or sys.argv[1:]\n'
                   '    return COMMANDS[argv[0]](argv[1:])\n',
    "tool/config.py": 'import os\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n'
                      '    verbose: bool = False\n\n\ndef load_config(env=None):\n    env = os.environ if env is None '
                      'else env\n    config = Config()\n    if "TOOL_VERBOSE" in env:\n'
                      '        config.verbose = env["TOOL_VERBOSE"] == "1"\n    return config\n',
    "tool/dates.py": 'from datetime import datetime\n\nFORMATS = [\n    "%Y-%m-%d",\n]\n\n\ndef parse_date(text):\n'
                     '    for fmt in FORMATS:\n        try:\n            return datetime.strptime(text, fmt)\n'
                     '        except ValueError:\n            continue\n    raise ValueError(text)\n',
    "docs/commands.md": "# Commands\n\n## Commands\n\n| command | what |\n|---|---|\n| list | lists the items |\n",
    "docs/config.md": "# Configuration\n\n## Options\n\n| variable | default |\n|---|---|\n| TOOL_VERBOSE | 0 |\n",
    "tests/test_cli.py": "from tool.cli import COMMANDS\n\n\ndef test_list():\n    assert 'list' in COMMANDS\n",
    "tests/test_config.py": "from tool.config import load_config\n\n\ndef test_default():\n"
                            "    assert load_config({}).verbose is False\n",
    "tests/test_dates.py": "from tool.dates import parse_date\n\n\ndef test_iso():\n"
                           "    assert parse_date('2026-01-02').day == 2\n",
}
COMMANDS = [("export", "writes the items to a CSV file"), ("prune", "removes stale items"),
            ("stats", "prints item statistics"), ("rename", "renames an item")]
OPTIONS = [("max_items", "100", "TOOL_MAX_ITEMS"), ("timeout", "30", "TOOL_TIMEOUT"),
           ("retries", "3", "TOOL_RETRIES"), ("page_size", "50", "TOOL_PAGE_SIZE")]
DATES = [("%d/%m/%Y", "02/01/2026"), ("%d.%m.%Y", "02.01.2026"), ("%Y%m%d", "20260102"), ("%b %d %Y", "Jan 02 2026")]
TRAP_ERROR = ("ImportError while importing test module 'tests/test_config.py'.\n"
              "E   ModuleNotFoundError: No module named 'tool'")
PASSED = "....                                                                     [100%]\n4 passed in 0.05s\n"


@dataclass
class ProceduresHistory:
    root: Path
    repo: Path
    sessions: list[tuple[str, str]] = field(default_factory=list)  # (kind, task)

    @property
    def trace_dir(self) -> Path:
        return self.root / "claude"


def _git(repo: Path, *args: str, when: datetime | None = None) -> str:
    stamp = (when or BASE).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env,
                          check=True).stdout.strip()


class _Play:
    """One session: reads, real edits (the repo changes), shell calls, a commit."""

    def __init__(self, h: ProceduresHistory, index: int, task: str, rng: random.Random) -> None:
        self.h, self.repo = h, h.repo
        self.start = BASE + timedelta(days=index, hours=rng.randint(0, 5))
        sid = f"00000000-0000-4000-8000-{index:012d}"
        self.s = ClaudeSession(cwd=str(self.repo), session_id=sid, start=self.start, rng=rng)
        self.sid = sid
        self.s.snapshot()
        self.s.user(task)

    def read(self, rel: str) -> None:
        text = (self.repo / rel).read_text()
        self.s.tool("Read", {"file_path": f"{self.repo}/{rel}"}, numbered(text),
                    {"type": "text", "file": {"filePath": f"{self.repo}/{rel}", "content": text}})

    def edit(self, rel: str, old: str, new: str) -> None:
        path = self.repo / rel
        before = path.read_text()
        assert before.count(old) == 1, (rel, old)
        path.write_text(before.replace(old, new, 1))
        self.s.tool("Edit", {"file_path": f"{self.repo}/{rel}", "old_string": old, "new_string": new},
                    f"The file {self.repo}/{rel} has been updated.", {"filePath": f"{self.repo}/{rel}",
                                                                       "oldString": old, "newString": new})

    def run(self, command: str, output: str = PASSED, ok: bool = True) -> None:
        self.s.tool("Bash", {"command": command, "description": "run"}, output if ok else f"Exit code 1\n{output}",
                    {"stdout": output, "stderr": "", "interrupted": False} if ok else f"Error: Exit code 1\n{output}",
                    is_error=not ok)

    def commit(self, message: str) -> None:
        _git(self.repo, "add", "-A")
        _git(self.repo, "commit", "-q", "-m", message, when=self.s.clock.now + timedelta(seconds=5))
        self.run(f'git add -A && git commit -m "{message}"', f"[main abc1234] {message}\n")
        self.s.write(self.h.trace_dir / "projects" / "repo" / f"{self.sid}.jsonl")


def _command(p: _Play, name: str, what: str) -> None:
    for rel in ("tool/cli.py", "docs/commands.md"):
        p.read(rel)
    p.edit("tool/cli.py", "\n\nCOMMANDS = {", f'\n\ndef cmd_{name}(args):\n    """{what}"""\n    return 0\n\n\n'
                                             "COMMANDS = {")
    p.edit("tool/cli.py", "\n}\n\n\ndef main", f'\n    "{name}": cmd_{name},\n}}\n\n\ndef main')
    doc = (p.repo / "docs/commands.md").read_text().rstrip("\n").splitlines()[-1] + "\n"
    p.edit("docs/commands.md", doc, doc + f"| {name} | {what} |\n")
    p.run("python -m pytest -q tests/test_cli.py")
    p.commit(f"Add the {name} command")


def _option(p: _Play, name: str, default: str, var: str, trap: bool) -> None:
    for rel in ("tool/config.py", "docs/config.md"):
        p.read(rel)
    p.edit("tool/config.py", "\n\n\ndef load_config", f"\n    {name}: int = {default}\n\n\ndef load_config")
    read = f'    if "{var}" in env:\n        config.{name} = int(env["{var}"])\n'
    p.edit("tool/config.py", "    return config\n", read + "    return config\n")
    doc = (p.repo / "docs/config.md").read_text().rstrip("\n").splitlines()[-1] + "\n"
    p.edit("docs/config.md", doc, doc + f"| {var} | {default} |\n")
    if trap:
        p.run("python -m pytest -q tests/test_config.py", TRAP_ERROR, ok=False)
        p.run("pip install -e .", "Successfully installed tool-0.1.0\n")
    p.run("python -m pytest -q tests/test_config.py")
    p.commit(f"Add the {name} config option")


def _dates(p: _Play, fmt: str, sample: str, n: int) -> None:
    for rel in ("tool/dates.py", "tests/test_dates.py"):
        p.read(rel)
    tail = (p.repo / "tests/test_dates.py").read_text().rstrip("\n").splitlines()[-1] + "\n"
    test = f"\n\ndef test_format_{n}():\n    assert parse_date('{sample}').day == 2\n"
    p.edit("tests/test_dates.py", tail, tail + test)
    p.run("python -m pytest -q tests/test_dates.py", f"F....\nFAILED tests/test_dates.py::test_format_{n} - "
                                                     f"ValueError: {sample}\n1 failed, 4 passed", ok=False)
    p.edit("tool/dates.py", "\n]\n", f'\n    "{fmt}",\n]\n')
    p.run("python -m pytest -q tests/test_dates.py")
    p.commit(f"Parse dates like {sample}")


def make_procedures_history(root: Path, seed: int = 0) -> ProceduresHistory:
    """The repo and the 12 sessions (see the module docstring)."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    h = ProceduresHistory(root=root, repo=repo)
    rng = random.Random(seed)
    for i in range(4):
        name, what = COMMANDS[i]
        task = f"Add a `{name}` command that {what}."
        p = _Play(h, 3 * i, task, rng)
        _command(p, name, what)
        h.sessions.append(("command", task))
        opt, default, var = OPTIONS[i]
        task = f"Add a config option `{opt}` (default {default}) read from the `{var}` environment variable."
        p = _Play(h, 3 * i + 1, task, rng)
        _option(p, opt, default, var, trap=i < 3)
        h.sessions.append(("config", task))
        fmt, sample = DATES[i]
        task = f"Fix the date parser: dates like \"{sample}\" are not parsed."
        p = _Play(h, 3 * i + 2, task, rng)
        _dates(p, fmt, sample, i)
        h.sessions.append(("dates", task))
    return h
