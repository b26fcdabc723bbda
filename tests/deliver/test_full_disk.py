"""A full disk never leaves a partial backup: a backup is complete or absent (issue 21 §4).

Two real ways a write fails part-way: a tiny tmpfs filled to the last byte (ENOSPC; needs the right
to mount, so root), and a file-size limit on the process (RLIMIT_FSIZE: EFBIG from the kernel, any
user). Each time the change is refused with one line, the user's file is untouched and nothing is
left in the backups folder; once there is room again, install backs up the real original and
uninstall brings it back byte for byte.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.quarantine import Allowlist
from habitus.deliver.backups import backups_root, original_of
from habitus.deliver.candidates import Candidate
from habitus.deliver.files import ConfigFileError
from habitus.deliver.install import install_hooks, uninstall_hooks
from habitus.deliver.promote import apply, propose
from habitus.deliver.undo import json_valid, text_valid

from .conftest import make_repo

SETTINGS = ('{\n    "model": "opus",\n    "env": {"NOTE": "' + "x" * 3000 + '"}\n}\n').encode()
AGENTS = ("# Agents\n\n" + "Keep money in integer cents.\n" * 120).encode()


def _leftovers() -> list[str]:
    """Every file under the backups folder (a partial backup would be one)."""
    root = backups_root()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


@contextlib.contextmanager
def _tiny_disk(where: Path) -> Iterator[Path]:
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path) -> Path:
    """Write until the disk is full; returns the filler (delete it to make room)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0" * 4096)
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0")  # the last bytes too
    finally:
        os.close(fd)
    return filler


def test_settings_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _tiny_disk(tmp_path / "disk") as disk:
        monkeypatch.setenv("HABITUS_HOME", str(disk / "home"))
        settings = disk / "settings.json"
        settings.write_bytes(SETTINGS)
        (disk / "home").mkdir()
        filler = _fill(disk)
        with pytest.raises(ConfigFileError, match="cannot back up") as refused:
            install_hooks("claude", settings)
        assert "\n" not in str(refused.value)
        assert settings.read_bytes() == SETTINGS and _leftovers() == []
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "home", "settings.json"]
        filler.unlink()
        install_hooks("claude", settings)  # room again: the next run backs up the real original
        assert original_of(settings, json_valid).data == SETTINGS
        uninstall_hooks("claude", settings)
        assert settings.read_bytes() == SETTINGS


def test_agents_md_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = connect()
    evidence = [Candidate(id="c1", text="Run `make migrate` before `pytest`: the test database is not migrated.",
                          source="pitfall", session_ids={"s1", "s2", "s3"}, tokens_cost=4000, failures=3)]
    with _tiny_disk(tmp_path / "disk") as disk:
        # the repo itself lives on the full disk (a link out of the repo is never written through: issue 21 §3)
        repo = make_repo(disk)
        target = link = repo / "AGENTS.md"
        target.write_bytes(AGENTS)
        monkeypatch.setenv("HABITUS_HOME", str(disk / "home"))
        filler = _fill(disk)

        def promote() -> dict:
            return apply(conn, propose(conn, link, subject=repo_subject(repo), candidates=evidence,
                                       allowlist=Allowlist.build(["make migrate && pytest"])))

        with pytest.raises(ConfigFileError, match="cannot back up"):
            promote()
        assert target.read_bytes() == AGENTS and _leftovers() == []
        filler.unlink()
        result = promote()
        assert original_of(link, text_valid).data == AGENTS
        assert Path(result["backup"]).read_bytes() == AGENTS
    conn.close()


def _limited(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG from write(), as a full disk gives ENOSPC
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_write_that_fails_part_way_leaves_no_backup(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_bytes(SETTINGS)
    done = subprocess.run([sys.executable, "-m", "habitus", "hooks", "install", "--settings", str(settings)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ),
                          preexec_fn=lambda: _limited(1024))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "cannot back up" in done.stderr and "Traceback" not in done.stderr
    assert settings.read_bytes() == SETTINGS
    assert _leftovers() == []  # nothing partial kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    install_hooks("claude", settings)
    uninstall_hooks("claude", settings)
    assert settings.read_bytes() == SETTINGS


def test_a_damaged_backup_is_never_restored(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_bytes(SETTINGS)
    change = install_hooks("claude", settings)
    backup = Path(change.backup)
    backup.write_bytes(SETTINGS[:100])  # cut short after it was written (a disk error, a person)
    uninstall_hooks("claude", settings)
    assert settings.read_bytes() != SETTINGS[:100]
    assert b"habitus" not in settings.read_bytes() and b"x" * 3000 in settings.read_bytes()
    assert not backup.exists()
