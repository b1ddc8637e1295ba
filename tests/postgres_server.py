"""A real PostgreSQL server for the tests and benchmarks of the PostgreSQL history backend.

`server_url` gives a server URL whose user may create databases: ``$PRIMBENCH_TEST_POSTGRES``
when set (``.ci/run`` starts one), else a throw-away server that `ThrowAwayServer` starts
with ``initdb`` and ``pg_ctl`` (found on PATH or under ``/usr/lib/postgresql/*/bin``) in a
temporary folder on a free port, stopped afterwards; else None, with the reason. As root,
the server runs as the ``postgres`` user (initdb refuses root). `fresh_database` makes an
empty database on it per test.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

ENV = "PRIMBENCH_TEST_POSTGRES"


def binaries() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres`` (PATH first, then Debian's)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name, reverse=True):
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ThrowAwayServer:
    """A PostgreSQL server in a temporary folder, its superuser ``primbench`` trusted on
    127.0.0.1 (`start`, `stop`). `fsync` off by default: nothing here survives the run anyway."""

    def __init__(self, bin_dir: Path, *, fsync: bool = False) -> None:
        self.bin = bin_dir
        self.fsync = fsync
        self.root = Path(tempfile.mkdtemp(prefix="primbench-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user: str | None = None
        if os.geteuid() == 0:  # initdb refuses root: run the server as postgres (or nobody)
            for name in ("postgres", "nobody"):
                try:
                    pwd.getpwnam(name)
                except KeyError:
                    continue
                self.user = name
                break
            if self.user is None:
                raise RuntimeError("running as root and no 'postgres' user to run the server as")
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.url = f"postgresql://primbench@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def start(self) -> str:
        done = self._run("initdb", "-D", str(self.data), "-U", "primbench", "--auth=trust", "-E", "UTF8",
                         "--no-sync", "--locale=C")
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip() or done.stdout.strip()}")
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        if not self.fsync:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        done = self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")
        if done.returncode != 0:
            log = (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()} {log[-2000:]}")
        return self.url

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def fresh_database(server: str) -> str:
    """A new, empty database on the server at `server` (a URL whose user may create databases);
    its URL."""
    import psycopg

    name = f"primbench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, rest = server.rpartition("/")
    query = rest.partition("?")[2]
    return f"{base}/{name}" + (f"?{query}" if query else "")
