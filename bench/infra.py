"""Private servers for the load and fault benchmarks: PostgreSQL, Redis, gunicorn, Celery.

The fault scripts restart databases and brokers, so they never touch the
shared PostgreSQL (127.0.0.1:5432) or Redis (6379) other people's tests use:
each run starts its own PostgreSQL cluster (``initdb`` into a temporary
directory, a free port from 5433 up, socket in the same directory) and its own
``redis-server`` (a free port from 6380 up, append-only file so queued tasks
survive a restart), and removes them at the end.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path("/usr/lib/postgresql/15/bin")
PYTHON = sys.executable


def free_port(start: int) -> int:
    """The first port from ``start`` on which nothing listens on loopback."""
    for port in range(start, start + 200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port from {start}")


def wait_for_port(port: int, timeout: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout}s")


def terminate(proc: subprocess.Popen | None, timeout: float = 10.0) -> None:
    """Stop a child politely (SIGTERM), then for good (SIGKILL) if it has not gone within ``timeout``."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def empty_database(url: str) -> None:
    """Make the database ``url`` names empty: a PostgreSQL database dropped (even with sessions still
    connected) and created again, or a SQLite file and its journal files deleted."""
    if url.startswith("sqlite:///"):
        for suffix in ("", "-wal", "-shm"):
            Path(url.removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)
        return
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _as_postgres_user() -> list[str]:
    """initdb and postgres refuse to run as root: run them as the postgres user then."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


class PrivatePostgres:
    """A throw-away PostgreSQL 15 cluster on its own port; ``restart()`` is what the fault runs use."""

    def __init__(self, port: int | None = None, max_connections: int = 200, statement_stats: bool = False):
        self.port = port or free_port(5433)
        self.statement_stats = statement_stats  # pg_stat_statements, for a report of where the server's time went
        self.dir = Path(tempfile.mkdtemp(prefix="reliability-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.max_connections = max_connections
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(PG_BIN / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-instructions")

    def _run(self, *args, check=True):
        return subprocess.run([*_as_postgres_user(), *map(str, args)], check=check, capture_output=True, text=True)

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/bench"

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                   f"-c max_connections={self.max_connections} -c shared_buffers=256MB")
        if self.statement_stats:
            options += " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on"
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "-t", "60", "start")
        wait_for_port(self.port)

    def create_database(self, name: str = "bench") -> None:
        self._run(PG_BIN / "createdb", "-h", "127.0.0.1", "-p", self.port, "-U", "postgres", name, check=False)
        if self.statement_stats:
            self._run(PG_BIN / "psql", "-h", "127.0.0.1", "-p", self.port, "-U", "postgres", "-d", name, "-c",
                      "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

    def top_statements(self, limit: int = 15) -> list[dict]:
        """The statements that took the most server time (planning + execution), with ``statement_stats``."""
        import psycopg

        with psycopg.connect(self.url.replace("postgres://", "postgresql://", 1)) as conn:
            rows = conn.execute(
                "SELECT calls, round((total_plan_time + total_exec_time)::numeric, 1), "
                "round(((total_plan_time + total_exec_time) / greatest(calls, 1))::numeric, 3), left(query, 160) "
                "FROM pg_stat_statements ORDER BY total_plan_time + total_exec_time DESC LIMIT %s", (limit,)
            ).fetchall()
        return [{"calls": c, "total_ms": float(t), "mean_ms": float(m), "query": q} for c, t, m, q in rows]

    def stop(self, mode: str = "fast") -> None:
        """``fast`` disconnects clients and shuts down cleanly; ``immediate`` is a crash (recovery on start)."""
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop", check=False)

    def restart(self, downtime: float = 3.0, mode: str = "immediate") -> None:
        self.stop(mode)
        time.sleep(downtime)
        self.start()

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivateRedis:
    """A throw-away redis-server; append-only so that queued tasks survive ``restart()``."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port(6380)
        self.dir = Path(tempfile.mkdtemp(prefix="reliability-redis-"))
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "yes"],
            stdout=open(self.dir / "redis.log", "a"), stderr=subprocess.STDOUT,
        )
        wait_for_port(self.port, proc=self.proc)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)  # a crash, not a clean shutdown: the AOF must hold
            self.proc.wait(10)

    def restart(self, downtime: float = 2.0) -> None:
        self.stop()
        time.sleep(downtime)
        self.start()

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def app_env(database_url: str, broker_url: str | None = None, **extra) -> dict:
    """The environment of the app and worker processes of a benchmark (DEBUG off, quiet logs)."""
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_ALLOW_ASYNC_UNSAFE", "TEST_DATABASE_NAME"}}
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings.development",
        "DATABASE_URL": database_url,
        "DEBUG": "0",
        "SECRET_KEY": "bench-" + secrets.token_urlsafe(48),
        "LOG_LEVEL": "WARNING",
        "VAR_DIR": str(ROOT / "var"),
        "API_TOKEN_RATE": "1000000/minute",
        "API_LOGIN_RATE": "1000000/minute",
    })
    if broker_url:
        env["CELERY_BROKER_URL"] = broker_url
    env.update({k: str(v) for k, v in extra.items()})
    return env


def manage(env: dict, *args) -> str:
    result = subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


class Gunicorn:
    """The app served by gunicorn on loopback."""

    def __init__(self, env: dict, workers: int = 4, threads: int = 1, port: int | None = None,
                 worker_class: str = "sync"):
        self.env = env
        self.workers = workers
        self.threads = threads
        self.worker_class = worker_class
        self.port = port or free_port(8600)
        self.log = ROOT / "var" / f"gunicorn-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, cwd: Path = ROOT) -> None:
        """Serve the application in ``cwd`` (this repository unless a benchmark compares another copy)."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        args = [PYTHON, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{self.port}",
                "-w", str(self.workers), "--threads", str(self.threads), "--worker-class", self.worker_class,
                "--backlog", "2048",
                "--timeout", "60", "--graceful-timeout", "5", "--log-level", "warning"]
        self.proc = subprocess.Popen(args, cwd=cwd, env=self.env, stdout=open(self.log, "w"),
                                     stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_port(self.port, timeout=60, proc=self.proc)

    def stop(self) -> None:
        terminate(self.proc, timeout=15)

    def worker_pids(self) -> list[int]:
        import psutil

        return [child.pid for child in psutil.Process(self.proc.pid).children()] if self.proc else []


class Granian(Gunicorn):
    """The app served by Granian (HTTP in Rust, keep-alive; each worker process runs Django in one thread)."""

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        args = [PYTHON, "-m", "granian", "--interface", "wsgi", "config.wsgi:application",
                "--host", "127.0.0.1", "--port", str(self.port), "--workers", str(self.workers),
                "--blocking-threads", str(self.threads), "--runtime-mode", "st", "--no-ws", "--log-level", "warning"]
        self.proc = subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=open(self.log, "w"),
                                     stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_port(self.port, timeout=60, proc=self.proc)


def machine_speed_ms(rounds: int = 5) -> float:
    """Milliseconds this machine takes for a fixed piece of pure-Python work (the best of ``rounds``).

    The benchmark machines are shared and their speed varies from day to day by
    a factor of several (docs/benchmarks.md): a figure printed with every run
    says which machine a result came from, so that runs are compared at equal speed.
    """
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        total = 0
        for n in range(1_000_000):
            total += n % 7
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
