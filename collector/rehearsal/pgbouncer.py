"""A PgBouncer process in transaction pooling, in front of a PostgreSQL server.

For the rehearsal (``manage.py rehearse --pgbouncer``) and the tests: a real ``pgbouncer``
(Debian's package, ``/usr/sbin/pgbouncer``) on a free port of 127.0.0.1, with its configuration,
auth file, pid file and log in one directory. Every database name is passed through to the server
(``* =``), clients are trusted (the server's own authentication still applies to PgBouncer's
connections), and the pool is small on purpose: requests wait for a server connection rather than
each holding one.

    with PgBouncer("postgres://postgres@127.0.0.1:5432", workdir) as bouncer:
        url = bouncer.url("collector")  # DATABASE_URL for the web server and the worker

What the application needs behind it (transaction pooling: a server connection belongs to a client
for one transaction only): ``DISABLE_SERVER_SIDE_CURSORS=1`` (the default), no session state kept
between transactions (the voting function keeps none) and no server-side prepared statements
(psycopg2 never prepares). Migrations may go either way; the rehearsal runs them directly.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote, unquote, urlsplit

__all__ = ["PgBouncer", "PgBouncerError", "PgBouncerMissing", "find_pgbouncer", "free_port"]

DEBIAN_PATH = "/usr/sbin/pgbouncer"


class PgBouncerError(RuntimeError):
    """PgBouncer did not start, or stopped answering."""


class PgBouncerMissing(PgBouncerError):
    """No pgbouncer executable on this machine."""


def find_pgbouncer() -> str | None:
    """The pgbouncer executable: Debian's, else the first on PATH; None when there is none."""
    if os.access(DEBIAN_PATH, os.X_OK):
        return DEBIAN_PATH
    return shutil.which("pgbouncer")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgBouncer:
    """One pgbouncer process; :meth:`start` and :meth:`stop`, or use it as a context manager.

    ``server`` is a URL without a database (``postgres://user[:password]@host:port``); clients
    connect as that user. As root, pgbouncer (which refuses to run as root) runs as ``os_user``,
    and ``workdir`` is handed to that user (its parents must let that user through).
    """

    def __init__(
        self,
        server: str,
        workdir: Path,
        *,
        port: int | None = None,
        pool_size: int = 3,
        max_client_conn: int = 1000,
        os_user: str = "postgres",
    ) -> None:
        parts = urlsplit(server)
        self.server_host = parts.hostname or "127.0.0.1"
        self.server_port = parts.port or 5432
        self.user = unquote(parts.username or "postgres")
        self.password = unquote(parts.password or "")
        self.dir = Path(workdir)
        self.port = port or free_port()
        self.pool_size = pool_size
        self.max_client_conn = max_client_conn
        self.os_user = os_user
        self.config = self.dir / "pgbouncer.ini"
        self.log = self.dir / "pgbouncer.log"
        self.stderr = self.dir / "pgbouncer.stderr"
        self.proc: subprocess.Popen[bytes] | None = None

    # --- configuration ------------------------------------------------------------------------

    def config_text(self) -> str:
        return "\n".join(
            [
                "[databases]",
                # Every database name goes to the same name on the server.
                f"* = host={self.server_host} port={self.server_port}",
                "",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                f"listen_port = {self.port}",
                "unix_socket_dir =",
                "auth_type = trust",
                f"auth_file = {self.dir / 'userlist.txt'}",
                f"admin_users = {self.user}",
                f"stats_users = {self.user}",
                "pool_mode = transaction",
                f"default_pool_size = {self.pool_size}",
                "min_pool_size = 0",
                "reserve_pool_size = 0",
                f"max_client_conn = {self.max_client_conn}",
                # A client waiting this long for a server connection gets an error, not a hang.
                "query_wait_timeout = 60",
                "server_lifetime = 3600",
                # After a failed login (the server restarting) try again within a second, not
                # after 15 s during which every new client would get an error.
                "server_login_retry = 1",
                "server_idle_timeout = 60",
                "ignore_startup_parameters = extra_float_digits,options",
                f"logfile = {self.log}",
                f"pidfile = {self.dir / 'pgbouncer.pid'}",
                "log_connections = 1",
                "log_disconnections = 1",
                "log_pooler_errors = 1",
                "stats_period = 60",
                "",
            ]
        )

    def _write_config(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config.write_text(self.config_text())
        secret = self.password.replace('"', '""')
        (self.dir / "userlist.txt").write_text(f'"{self.user}" "{secret}"\n')
        if os.geteuid() == 0:  # pgbouncer switches to os_user before it opens its log
            pw = pwd.getpwnam(self.os_user)
            for path in [self.dir, *self.dir.iterdir()]:
                os.chown(path, pw.pw_uid, pw.pw_gid)

    # --- process ------------------------------------------------------------------------------

    def command(self) -> list[str]:
        exe = find_pgbouncer()
        if exe is None:
            raise PgBouncerMissing(
                f"pgbouncer is not installed (no {DEBIAN_PATH}, none on PATH): "
                "apt-get install pgbouncer"
            )
        cmd = [exe, "-q"]  # -q: log to the file only
        if os.geteuid() == 0:
            cmd += ["-u", self.os_user]
        return [*cmd, str(self.config)]

    def start(self, timeout: float = 30.0) -> PgBouncer:
        """Start pgbouncer and wait until a query through it is answered."""
        if self.running():
            raise PgBouncerError("pgbouncer is already running")
        cmd = self.command()
        self._write_config()
        # With -q, only what pgbouncer says before its log file is open (a fatal error) lands here.
        with open(self.stderr, "wb") as err:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.proc = None
                raise PgBouncerError(f"pgbouncer exited at start:\n{self.log_tail()}")
            try:
                self.admin("SHOW VERSION")
                return self
            except Exception as exc:  # not listening yet
                last = exc
                time.sleep(0.1)
        self.stop()
        raise PgBouncerError(f"pgbouncer did not answer in {timeout:.0f} s ({last}):\n"
                             f"{self.log_tail()}")  # fmt: skip

    def stop(self) -> None:
        """SIGTERM (immediate shutdown: clients are disconnected), then wait."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> PgBouncer:
        return self.start()

    def __exit__(
        self, typ: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- use ----------------------------------------------------------------------------------

    def url(self, dbname: str) -> str:
        """A ``DATABASE_URL`` for ``dbname`` through this PgBouncer."""
        auth = quote(self.user, safe="")
        if self.password:
            auth += ":" + quote(self.password, safe="")
        return f"postgres://{auth}@127.0.0.1:{self.port}/{quote(dbname, safe='')}"

    def admin(self, command: str) -> list[dict[str, Any]]:
        """A command of PgBouncer's admin console (``SHOW POOLS``, ``SHOW STATS``, ...)."""
        import psycopg2

        conn = psycopg2.connect(
            host="127.0.0.1", port=self.port, user=self.user, password=self.password or None,
            dbname="pgbouncer", connect_timeout=3,
        )  # fmt: skip
        try:
            conn.autocommit = True  # the console knows no transactions
            with conn.cursor() as cur:
                cur.execute(command)
                if cur.description is None:
                    return []
                names = [d[0] for d in cur.description]
                return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        finally:
            conn.close()

    def log_text(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")
        return ""

    def log_tail(self, n: int = 3000) -> str:
        early = ""
        with contextlib.suppress(OSError):
            early = self.stderr.read_text(errors="replace")
        return (early + self.log_text())[-n:]
