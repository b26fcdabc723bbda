"""The hook server (issue 22 §6): a served event prints, logs and counts what the hook's own worker would, within the
same hard budget; without a server the hook runs the event itself and starts one; a server refuses what is not its
own and leaves when idle. Real servers, real hook processes, a real repo and store.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.deliver.hook_client import PROTOCOL, socket_path
from habitus.deliver.hook_server import package_fingerprint
from habitus.store.memory import save_workflows

from .conftest import commit_migrations, migration_workflow, run_hook
from .test_hook_budget import _float_bomb, _logged

SERVED = {"HABITUS_HOOK_SERVER": "on", "HABITUS_HOOK_TRACE": "1"}


@pytest.fixture(autouse=True)
def _embedded_store_only(store_backend: str) -> None:
    if store_backend == "postgres":
        pytest.skip("the server runs the same handlers on either store: the embedded one is enough here")


def _log(home: Path) -> str:
    path = home / "logs" / "hooks.log"
    return path.read_text() if path.exists() else ""


def _prompt(repo: Path, session: str) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
            "prompt": "add a migration for the users table"}


def _wait(predicate, timeout: float = 30.0) -> bool:  # noqa: ANN001
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _serving() -> bool:
    path = socket_path()
    if path is None or not os.path.exists(path):
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


@pytest.fixture
def server(habitus_home: Path):  # noqa: ANN201
    proc = subprocess.Popen([sys.executable, "-m", "habitus.deliver.hook_server"],
                            env={**os.environ, **SERVED, "HABITUS_HOOK_SERVER_IDLE_S": "60"})
    assert _wait(_serving), "the server never listened"
    yield proc
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


def _seed(repo: Path) -> None:
    commit_migrations(repo, message="schema")
    conn = connect()
    save_workflows(conn, repo_subject(repo), [migration_workflow(use_when="adding a database migration")])
    conn.close()


def test_a_served_event_prints_logs_and_counts_what_the_hook_would(repo: Path, habitus_home: Path, server) -> None:
    _seed(repo)
    own = run_hook("UserPromptSubmit", _prompt(repo, "s-own"), budget="20", env={"HABITUS_HOOK_TRACE": "1"})
    served = run_hook("UserPromptSubmit", _prompt(repo, "s-served"), budget="20", env=SERVED)
    assert served.returncode == 0 and b"db/migrations.py" in served.stdout
    assert json.loads(served.stdout) == json.loads(own.stdout)
    lines = _log(habitus_home).splitlines()
    assert lines[-1].endswith("(served)") and not lines[-2].endswith("(served)")
    assert [h["workflows"] for h in _logged("s-served")] == [["wf-mig"]]
    conn = connect()
    assert conn.execute("SELECT shown FROM workflows WHERE id = 'wf-mig'").fetchone()[0] == 2
    conn.close()


def test_a_served_event_keeps_the_budget_when_its_work_holds_the_gil(repo: Path, habitus_home: Path,
                                                                     server) -> None:
    _seed(repo)
    bomb = _float_bomb(2_000_000)
    conn = connect()
    row = json.loads(conn.execute("SELECT data FROM workflows WHERE id = 'wf-mig'").fetchone()[0])
    heavy = json.dumps(row)[:-1] + ', "blob": ' + bomb + "}"
    conn.execute("UPDATE workflows SET data = ? WHERE id = 'wf-mig'", (heavy,))
    conn.close()
    start = time.monotonic()
    json.loads(bomb)
    parse_s = time.monotonic() - start
    budget = 0.3
    start = time.monotonic()
    done = run_hook("UserPromptSubmit", _prompt(repo, "s-gil"), budget=str(budget), env=SERVED)
    elapsed = time.monotonic() - start
    assert (done.returncode, done.stdout) == (0, b"")
    assert elapsed < budget + parse_s / 2, (elapsed, parse_s)
    assert "timeout" in _log(habitus_home)
    # the child was ended at the deadline by the kernel, long before its parse could end: nothing of it is left
    # (the server reaps it within half a second), nothing was logged as shown
    assert _wait(lambda: subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True).stdout == b"",
                 max(0.0, start + budget + parse_s - time.monotonic()))
    assert _logged("s-gil") == []


def test_without_a_server_the_hook_runs_the_event_and_starts_one(repo: Path, habitus_home: Path) -> None:
    _seed(repo)
    first = run_hook("UserPromptSubmit", _prompt(repo, "s-1"), budget="20", env=SERVED)
    assert b"db/migrations.py" in first.stdout and not _log(habitus_home).splitlines()[-1].endswith("(served)")
    assert _wait(_serving), "no server was started"
    try:
        second = run_hook("UserPromptSubmit", _prompt(repo, "s-2"), budget="20", env=SERVED)
        assert json.loads(second.stdout) == json.loads(first.stdout)
        assert _log(habitus_home).splitlines()[-1].endswith("(served)")
    finally:
        pids = subprocess.run(["pgrep", "-f", "habitus.deliver.hook_server"], capture_output=True, text=True).stdout
        for pid in pids.split():  # the server this test started: its socket is in this test's home
            if str(habitus_home) in Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace"):
                os.kill(int(pid), signal.SIGTERM)
    assert _wait(lambda: not _serving())


def test_a_request_from_another_installation_is_refused(server) -> None:
    path = socket_path()
    assert path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        header = json.dumps({"v": PROTOCOL, "event": "UserPromptSubmit", "agent": "claude", "cwd": "/", "env": {},
                             "remaining": 5.0, "package": "/somewhere/else/habitus"}).encode()
        sock.sendall(len(header).to_bytes(8, "big") + header + (0).to_bytes(8, "big"))
        sock.settimeout(10)
        assert sock.recv(1) == b"R"


def test_one_server_per_home_and_it_leaves_when_idle(habitus_home: Path) -> None:
    env = {**os.environ, **SERVED, "HABITUS_HOOK_SERVER_IDLE_S": "0.5"}
    first = subprocess.Popen([sys.executable, "-m", "habitus.deliver.hook_server"], env=env)
    assert _wait(_serving)
    second = subprocess.run([sys.executable, "-m", "habitus.deliver.hook_server"], env=env, timeout=30)
    assert second.returncode == 0 and first.poll() is None  # the second found the home taken and left
    assert first.wait(timeout=30) == 0
    assert not _serving() and not os.path.exists(socket_path() or "/nonexistent")


def test_uninstalling_the_hooks_sends_the_server_away(repo: Path, server) -> None:
    def cli(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "habitus", *args], cwd=repo, check=True, capture_output=True,
                       env={**os.environ, **SERVED}, timeout=120)

    cli("hooks", "install", "--agent", "claude", "--scope", "project")
    cli("hooks", "uninstall", "--dry-run")
    assert _serving() and server.poll() is None  # a dry run changes nothing
    cli("hooks", "uninstall")
    assert server.wait(timeout=30) == 0  # it noticed its socket was gone and left
    assert not _serving()


def test_the_fingerprint_follows_the_package_files(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    before = package_fingerprint(tmp_path)
    os.utime(tmp_path / "pkg" / "a.py", ns=(1, 1))
    assert package_fingerprint(tmp_path) != before


def _recall(repo: Path, *args: str, env: dict[str, str], stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "habitus.recall", *args], input=stdin,
                          capture_output=True, timeout=60, env={**os.environ, **env}, cwd=repo)


def test_recall_on_a_running_server_prints_and_exits_as_it_does_alone(repo: Path, server) -> None:
    _seed(repo)
    alone = {"HABITUS_HOOK_SERVER": "off"}
    for args, stdin in ((("add a migration for the users table", "--cwd", str(repo), "--json"), b""),
                        (("-", "--cwd", str(repo)), b"add a migration for the orders table"),
                        (("add a migration", "--cwd", str(repo / "missing")), b""),
                        (("add a migration", "--bogus"), b"")):
        served, own = _recall(repo, *args, env=SERVED, stdin=stdin), _recall(repo, *args, env=alone, stdin=stdin)
        assert (served.returncode, served.stdout) == (own.returncode, own.stdout), args
        messages = [[ln for ln in p.stderr.decode().splitlines() if not ln.startswith("import time:")]
                    for p in (served, own)]
        assert messages[0] == messages[1], args
        # the served run never imported recall itself: the server's child ran it
        assert b"habitus.recall.api" not in served.stderr, args
        assert (b"habitus.recall.api" in own.stderr) is ("--bogus" not in args), args
    assert b"db/migrations.py" in _recall(repo, "add a migration", "--cwd", str(repo), env=SERVED).stdout


def test_recall_without_a_server_runs_alone_and_starts_none(repo: Path, habitus_home: Path) -> None:
    _seed(repo)
    done = _recall(repo, "add a migration", "--cwd", str(repo), env=SERVED)
    assert done.returncode == 0 and b"habitus.recall.api" in done.stderr
    # a server takes longer than this to listen: the hook's start marker says whether one was started at all
    assert not os.path.exists(f"{socket_path()}.starting")
    time.sleep(0.5)
    assert not _serving()


def test_a_repo_map_the_server_keeps_is_never_handed_over_stale(repo: Path, server) -> None:
    from habitus.core.repomap import CheckConvention, RepoMap
    from habitus.store.repomap import save_repo_map

    _seed(repo)
    subject = repo_subject(repo)

    def save(check: str) -> None:
        conn = connect()
        save_repo_map(conn, subject, RepoMap(subject=subject, tasks=4, checked_tasks=4,
                                             checks=[CheckConvention(check, "test", 4)]))
        conn.close()

    def context(session: str) -> str:
        done = run_hook("UserPromptSubmit", _prompt(repo, session), budget="20", env=SERVED)
        return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]

    save("pytest -q")
    time.sleep(2.2)  # settled: the server keeps the map the first child reads
    assert "pytest -q" in context("s-map-1")
    assert "pytest -q" in context("s-map-2")  # from the kept map
    time.sleep(1.1)
    save("tox -q")  # a new version of the map, in a later second
    later = context("s-map-3")
    assert "tox -q" in later and "pytest -q" not in later


def test_the_server_preloads_what_a_prompt_imports(repo: Path, tmp_path: Path) -> None:
    """A module the prompt path imports and the server did not would be imported again by every child."""
    from habitus.core.repomap import CheckConvention, RepoMap
    from habitus.store.repomap import save_repo_map

    _seed(repo)
    conn = connect()
    save_repo_map(conn, repo_subject(repo), RepoMap(subject=repo_subject(repo), tasks=4, checked_tasks=4,
                                                    checks=[CheckConvention("pytest -q", "test", 4)]))
    conn.close()
    script = tmp_path / "probe.py"
    script.write_text(
        "import sys, json\n"
        "from habitus.deliver.hook_server import _preload\n"
        "_preload()\n"
        "before = set(sys.modules)\n"
        "from habitus.deliver.events import run_event\n"
        f"out = run_event('UserPromptSubmit', {{'cwd': {str(repo)!r}, 'session_id': 'probe',\n"
        "                 'prompt': 'add a migration for the users table in db/migrations.py'})\n"
        "print(json.dumps({'printed': bool(out), 'new': sorted(m for m in set(sys.modules) - before\n"
        "                                                    if m.startswith('habitus'))}))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report == {"printed": True, "new": []}


def test_no_server_where_processes_cannot_fork(habitus_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from habitus.deliver.hook_client import enabled

    monkeypatch.setenv("HABITUS_HOOK_SERVER", "on")
    assert enabled(lambda _section, _key: None)
    assert not enabled(lambda _section, _key: False)  # `hooks.server = false`
    monkeypatch.delattr(os, "fork")  # as on Windows: the hook runs its event itself
    assert not enabled(lambda _section, _key: None)
    monkeypatch.delattr(os, "getuid")
    from habitus.deliver.hook_client import stop_server

    assert stop_server() is False  # `hooks uninstall` there has no server to send away, and does not fail
