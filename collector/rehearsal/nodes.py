"""The rehearsal's web tier: N separate web servers (granian) and, for N >= 2, HAProxy before them.

Node ``i`` (1..N) listens on ``port + i`` of 127.0.0.1; HAProxy (Debian's ``haproxy``) listens
on ``port``, sends each request to the next node that passes its health check (round robin),
adds ``X-Forwarded-For`` (so the nodes run with ``NUM_PROXIES=1``) and keeps keep-alive
connections to the nodes. With one node the crowd talks to it on ``port`` directly, without a
load balancer. The nodes share nothing but PostgreSQL (or PgBouncer) and Redis: the rate limits
are counted in the cache every node is configured with (``CACHE_URL``).

How HAProxy routes around a node that dies:

- health checks: ``GET /healthz`` every ``CHECK_INTERVAL_MS`` ms, each given 5 s to answer (a
  node busy with votes answers late; a check timing out after half a second took healthy nodes
  out under load); 3 failures mark the node DOWN, 2 successes bring it back UP;
- a refused connection to a node marks it DOWN at once (``observe layer4``) and the request goes
  to another node (``option redispatch``, ``retry-on conn-failure``);
- a connection the node closes without an answer (killed mid-request) is retried on another
  node too (``retry-on empty-response``): the vote is idempotent (a repeat of a stored vote is
  answered 200) and so is registering a participant id; the crowd retries whatever still fails.

    tier = WebTier(nodes=2, port=8765, env=env, logs=folder, workers=2, threads=4)
    tier.start()
    tier.url            # what the crowd talks to
    tier.kill_node(0)   # SIGKILL node 1 and its workers
    tier.servers()      # HAProxy's view of each node: status, requests, 5xx
    tier.stop()
"""

from __future__ import annotations

import csv
import io
import shutil
import socket
from pathlib import Path
from typing import Any

from collector.rehearsal.pgbouncer import free_port
from collector.rehearsal.processes import BIN, Service, ServiceError, wait_until

__all__ = ["HAProxy", "HAProxyMissing", "WebTier", "find_haproxy", "granian_command"]

DEBIAN_HAPROXY = "/usr/sbin/haproxy"
CHECK_INTERVAL_MS = 1000
HEALTH_PATH = "/healthz"


class HAProxyMissing(ServiceError):
    """No haproxy executable on this machine."""


def find_haproxy() -> str:
    exe = DEBIAN_HAPROXY if Path(DEBIAN_HAPROXY).exists() else shutil.which("haproxy")
    if exe is None:
        raise HAProxyMissing(
            f"haproxy is not installed (no {DEBIAN_HAPROXY}, none on PATH): apt-get install "
            "haproxy (bin/install-test-deps installs it)"
        )
    return exe


def granian_command(port: int, workers: int, threads: int) -> list[str]:
    return [str(BIN / "granian"), "--interface", "wsgi", "--host", "127.0.0.1",
            "--port", str(port), "--workers", str(workers), "--blocking-threads", str(threads),
            "--backlog", "2048", "--log-level", "warning",
            "config.wsgi:application"]  # fmt: skip


class HAProxy(Service):
    """HAProxy in the foreground (``-db``), its configuration and log in ``workdir``."""

    def __init__(self, port: int, nodes: list[int], workdir: Path) -> None:
        self.port = port
        self.nodes = nodes
        self.dir = workdir
        self.config = workdir / "haproxy.cfg"
        self.stats_port = free_port()
        super().__init__("haproxy", [find_haproxy(), "-db", "-f", str(self.config)], {},
                         workdir / "haproxy.log")  # fmt: skip

    def config_text(self) -> str:
        check = (f"check inter {CHECK_INTERVAL_MS} fall 3 rise 2 "
                 "observe layer4 error-limit 1 on-error mark-down")  # fmt: skip
        return "\n".join(
            [
                "global",
                "    maxconn 4096",
                # Read-only statistics on a TCP port (a Unix socket's path has a short limit).
                f"    stats socket ipv4@127.0.0.1:{self.stats_port} level user",
                "    log stdout format short local0 notice",
                "",
                "defaults",
                "    mode http",
                "    log global",
                "    option dontlognull",
                "    option forwardfor",  # X-Forwarded-For: the nodes run with NUM_PROXIES=1
                "    option http-keep-alive",
                "    option redispatch 1",
                "    retries 3",
                "    retry-on conn-failure empty-response",
                "    timeout connect 2s",
                "    timeout client 60s",
                "    timeout server 60s",
                "    timeout http-keep-alive 60s",
                "    timeout http-request 30s",
                # A busy node answers its check late, not never: the check waits for it (a dead
                # node refuses the connection at once).
                "    timeout check 5s",
                "",
                "frontend voters",
                f"    bind 127.0.0.1:{self.port}",
                "    maxconn 4096",
                "    default_backend nodes",
                "",
                "backend nodes",
                "    balance roundrobin",
                "    option httpchk",
                f"    http-check send meth GET uri {HEALTH_PATH} ver HTTP/1.1 hdr Host 127.0.0.1",
                "    http-check expect status 200",
                *(
                    f"    server node{i} 127.0.0.1:{port} {check}"
                    for i, port in enumerate(self.nodes, 1)
                ),  # fmt: skip
                "",
            ]
        )

    def start(self) -> HAProxy:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config.write_text(self.config_text())
        check = Service("haproxy -c", [*self.command, "-c"], {}, self.log).start()
        assert check.proc is not None
        if check.proc.wait(timeout=30):
            raise ServiceError(f"haproxy refused its configuration:\n{check.log_tail()}")
        super().start()
        return self

    def admin(self, command: str) -> str:
        """One command on the statistics socket (``show stat``, ``show info``, ...)."""
        with socket.create_connection(("127.0.0.1", self.stats_port), timeout=5) as s:
            s.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def servers(self) -> dict[str, dict[str, Any]]:
        """Each node as HAProxy sees it: ``status`` (UP, DOWN, ...), ``requests`` sent to it,
        ``responses_5xx``, ``check_downs`` (times it went down), ``downtime_s``,
        ``connection_errors``, ``response_errors`` (connections it closed without an answer),
        ``retries`` and ``redispatches`` (requests sent again, to it or to another node)."""
        text = self.admin("show stat").lstrip("# ")
        out: dict[str, dict[str, Any]] = {}
        for row in csv.DictReader(io.StringIO(text)):
            if row.get("pxname") != "nodes" or row.get("svname") in ("BACKEND", "FRONTEND"):
                continue

            def n(key: str, row: dict[str, str] = row) -> int:
                return int(row.get(key) or 0)

            out[row["svname"]] = {
                "status": row["status"].split()[0], "requests": n("req_tot") or n("stot"),
                "responses_5xx": n("hrsp_5xx"), "check_downs": n("chkdown"),
                "downtime_s": n("downtime"), "connection_errors": n("econ"),
                "response_errors": n("eresp"), "retries": n("wretr"),
                "redispatches": n("wredis"),
            }  # fmt: skip
        return out


class WebTier:
    """``nodes`` granian servers (``workers`` x ``threads`` each), and HAProxy when there are
    two or more. Every node gets ``env`` plus ``NUM_PROXIES=1`` behind HAProxy. The nodes listen
    on ``port + i`` unless ``node_ports`` names their ports."""

    def __init__(
        self, *, nodes: int, port: int, env: dict[str, str], logs: Path, workers: int,
        threads: int, node_ports: list[int] | None = None,
    ) -> None:  # fmt: skip
        self.port = port
        self.balanced = nodes > 1
        self.ports = [port + i for i in range(1, nodes + 1)] if self.balanced else [port]
        if node_ports is not None and self.balanced:
            self.ports = node_ports[:nodes]
        node_env = {**env, "NUM_PROXIES": "1"} if self.balanced else env
        self.nodes = [
            Service(f"web node {i}", granian_command(p, workers, threads), node_env,
                    logs / f"web{i}.log" if self.balanced else logs / "web.log")
            for i, p in enumerate(self.ports, 1)
        ]  # fmt: skip
        self.haproxy = HAProxy(port, self.ports, logs / "haproxy") if self.balanced else None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def node_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.ports[index]}"

    def start(self) -> None:
        if self.haproxy is not None:
            find_haproxy()  # before anything starts: a clear message when it is missing
        for node in self.nodes:
            node.start()
        for i, node in enumerate(self.nodes):
            node.wait_for_http(self.node_url(i) + HEALTH_PATH)
        if self.haproxy is not None:
            self.haproxy.start()
            self.haproxy.wait_for_http(self.url + HEALTH_PATH, timeout=30)
            self.wait_status({f"node{i}" for i in range(1, len(self.nodes) + 1)}, "UP")

    def stop(self) -> None:
        if self.haproxy is not None:
            self.haproxy.stop()
        for node in self.nodes:
            node.stop()

    def kill_node(self, index: int) -> int:
        """SIGKILL node ``index`` (0-based) and its workers; its main pid."""
        return self.nodes[index].kill()

    def restart_node(self, index: int) -> None:
        node = self.nodes[index]
        node.start()
        node.wait_for_http(self.node_url(index) + HEALTH_PATH)

    def servers(self) -> dict[str, dict[str, Any]]:
        return self.haproxy.servers() if self.haproxy is not None else {}

    def wait_status(self, names: set[str], status: str, timeout: float = 30) -> float:
        """Wait until HAProxy reports every node in ``names`` with ``status``; seconds waited."""

        def ready() -> bool:
            assert self.haproxy is not None
            self.haproxy.check()
            found = self.servers()
            return all(found.get(name, {}).get("status") == status for name in names)

        return wait_until(ready, timeout, f"haproxy to see {sorted(names)} {status}", 0.05)
