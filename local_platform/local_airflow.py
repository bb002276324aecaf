"""Airflow on one machine, on loopback: what `airflow standalone` runs, started one component at a time.

api-server, scheduler (LocalExecutor), dag-processor and, when asked, the triggerer, on SQLite, with
SimpleAuthManager. The components are started separately, not through `airflow standalone`, for two
reasons found by running it: standalone's scheduler and triggerer start log servers on every
interface (each one's own `--skip-serve-logs` turns them off), and standalone leaves its children
running when it is sent SIGTERM.

The api-server runs as two processes: the UI and REST API (`--apps core`) and the tasks' Execution API
(`--apps execution`, on a port of its own). In one process, on SQLite, a REST write (its audit-log
insert is committed synchronously inside an async dependency, on the event loop) that comes while a
task's Execution API call holds an uncommitted write (committed when its session dependency closes,
which needs that event loop) deadlocks both for SQLite's busy timeout: the REST call fails with
HTTP 500 "database is locked" after 5 s and the task's call stalls (found by `make up`'s test; a
probe of the database's write lock showed it held exactly that long).

hudi-ops' sensors reschedule rather than defer, so the tests and the demo run no triggerer; `make up`
does, for the user's own deferrable tasks.

Each component runs in its own session, so `stop()` also ends what it started: LocalExecutor
workers and their spark-submits, found by walking /proc.

Once started, its settings are in `<home>/airflow.env` (readable by its user only): `set -a; .
<home>/airflow.env; set +a` in a shell, then `airflow dags list` or `airflow backfill create` act on
this Airflow; `LocalAirflow.attach(home)` is the same from Python (the tests of `make up`).
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hudi_ops.airflow.hooks.airflow_api import DEFAULT_CONN_ID as AIRFLOW_API_CONN_ID
from hudi_ops.airflow.hooks.airflow_api import AirflowApi, AirflowApiError
from local_platform import airflow_sqlite
from local_platform.ports import free_port

TERMINAL_RUN_STATES = frozenset({"success", "failed"})
#: in the home: the settings another shell needs to run `airflow` on this instance
ENV_FILE = "airflow.env"
PASSWORDS_FILE = "passwords.json"


class AirflowError(RuntimeError):
    """The local Airflow did not start, or answered an API call with an error."""


class LocalAirflow:
    USER = "admin"

    def __init__(self, home: Path, *, dags_folder: Path,
                 env: Mapping[str, str] | None = None, parallelism: int = 4, port: int | None = None,
                 triggerer: bool = False) -> None:
        self.home = Path(home)
        self.port = port or 0  # 0: a free one, chosen right before the api-server binds it
        self.execution_port = 0  # the Execution API's, always a free one
        self.triggerer = triggerer
        self.home.mkdir(parents=True, exist_ok=True)
        self.password = secrets.token_urlsafe(12)  # a new one per start-up, printed for the UI's login
        _write_private(self.home / PASSWORDS_FILE, json.dumps({self.USER: self.password}))
        #: what this Airflow's components run with, over this process's environment (`env`)
        self.settings = {
            # the venv's bin first: spark-submit finds pyspark through `python3` on PATH
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(self.home / "plugins"),  # hudi-ops' own comes by its entry point
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": str(parallelism),  # each task may be a Spark JVM: few at once
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__AUTH_MANAGER":
                "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{self.USER}:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(self.home / PASSWORDS_FILE),
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{self.home / 'airflow.db'}",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS": f"{airflow_sqlite.__name__}.CONNECT_ARGS",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC": f"{airflow_sqlite.__name__}.ASYNC_CONNECT_ARGS",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "False",
            **(env or {}),
        }
        self._processes: dict[str, subprocess.Popen[bytes]] = {}
        self._client: AirflowApi | None = None  # made once the port is known

    @classmethod
    def attach(cls, home: Path) -> LocalAirflow:
        """The Airflow another process started in `home`: its REST API and its CLI (that process stops it)."""
        attached = cls.__new__(cls)  # not __init__: it would write a new password
        attached.home = Path(home)
        attached.triggerer = False  # what start() would run: an attached Airflow is never started
        attached.settings = {}
        for line in (attached.home / ENV_FILE).read_text().splitlines():
            key, _, value = line.partition("=")
            attached.settings[key] = shlex.split(value)[0]
        attached.port = int(attached.settings["AIRFLOW__API__PORT"])
        attached.execution_port = 0
        attached.password = json.loads((attached.home / PASSWORDS_FILE).read_text())[cls.USER]
        attached._processes, attached._client = {}, None
        return attached

    # -- life cycle ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 240.0) -> LocalAirflow:
        self._airflow("db", "migrate")
        self.port = self.port or free_port()
        self.execution_port = free_port()
        self.settings.update({
            "AIRFLOW__API__PORT": str(self.port), "AIRFLOW__API__BASE_URL": self.url,
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{self.execution_port}/execution/",
            # tasks that pause DAGs (the restore DAG) call this api-server as the admin
            f"AIRFLOW_CONN_{AIRFLOW_API_CONN_ID.upper()}": json.dumps(
                {"conn_type": "http", "host": "127.0.0.1", "port": self.port, "login": self.USER,
                 "password": self.password})})
        try:
            for name, args in self._components():
                with open(self.home / f"{name}.log", "ab") as log:
                    self._processes[name] = subprocess.Popen(
                        [sys.executable, "-m", "airflow", *args], env=self.env, stdin=subprocess.DEVNULL,
                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                    )
            self._wait_healthy(timeout_s)
        except BaseException:
            self.stop()
            raise
        self._write_env_file()
        return self

    def pids(self) -> list[int]:
        """The pids of its running components (the api-servers, the scheduler, the dag-processor, the triggerer)."""
        return [p.pid for p in self._processes.values() if p.poll() is None]

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, **self.settings}

    def _write_env_file(self) -> None:
        # it holds the admin's password and the API's signing secret
        lines = [f"{key}={shlex.quote(value)}\n" for key, value in sorted(self.settings.items())]
        _write_private(self.home / ENV_FILE, "".join(lines))

    def _components(self) -> list[tuple[str, list[str]]]:
        out = [("api-server", ["api-server", "--apps", "core", "--host", "127.0.0.1", "--port", str(self.port)]),
               ("execution-api", ["api-server", "--apps", "execution", "--host", "127.0.0.1",
                                  "--port", str(self.execution_port)]),
               ("scheduler", ["scheduler", "--skip-serve-logs"]), ("dag-processor", ["dag-processor"])]
        return out + ([("triggerer", ["triggerer", "--skip-serve-logs"])] if self.triggerer else [])

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`airflow ARGS` on this Airflow's configuration and database (e.g. `backfill create`)."""
        return subprocess.run([sys.executable, "-m", "airflow", *args], env=self.env, capture_output=True, text=True)

    def _airflow(self, *args: str) -> None:
        done = self.cli(*args)
        if done.returncode:
            raise AirflowError(f"`airflow {' '.join(args)}` failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")

    def _wait_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            for name, proc in self._processes.items():
                if proc.poll() is not None:
                    raise AirflowError(f"the {name} exited with {proc.returncode}:\n{self.log_tail(name)}")
            try:
                health = self.client.call("GET", "/api/v2/monitor/health", auth=False, retries=0)  # we poll
                execution = AirflowApi(f"http://127.0.0.1:{self.execution_port}", retries=0)
                if all(health.get(c, {}).get("status") == "healthy"
                       for c in ("metadatabase", "scheduler", "dag_processor",
                                 *(("triggerer",) if self.triggerer else ()))) \
                        and execution.call("GET", "/execution/health", auth=False) is not None:
                    return
            except AirflowApiError:
                pass
            if time.monotonic() > deadline:
                raise AirflowError(f"Airflow was not healthy within {timeout_s:g}s:\n{self.log_tail('api-server')}")
            time.sleep(1)

    def dead_component(self) -> str | None:
        """A component that exited on its own, if one did."""
        return next((name for name, proc in self._processes.items() if proc.poll() is not None), None)

    def stop(self, grace_s: float = 20.0) -> None:
        """SIGTERM each component's session, SIGKILL what is left, then whatever they started that still
        runs (a spark-submit, its driver)."""
        started = _descendants(p.pid for p in self._processes.values() if p.poll() is None)
        for proc in self._processes.values():
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for proc in self._processes.values():
            try:
                proc.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
        for pid, start in started.items():
            if _start_time(pid) == start:  # the same process, not a new one that got its pid
                _signal_group(pid, signal.SIGKILL)
        self._processes.clear()

    def __enter__(self) -> LocalAirflow:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_tail(self, component: str, chars: int = 4000) -> str:
        try:
            return (self.home / f"{component}.log").read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return ""

    # -- REST API --------------------------------------------------------------------------------

    @property
    def client(self) -> AirflowApi:
        if self._client is None:
            self._client = AirflowApi(self.url, self.USER, self.password)
        return self._client

    def api(self, method: str, path: str, body: Any = None, *, auth: bool = True) -> Any:
        return self.client.call(method, path, body, auth=auth)

    def token(self) -> str:
        """A JWT for the admin user, as the UI's login form gets it."""
        return self.client.token()

    def wait_for_dags(self, dag_ids: Iterable[str], timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        for dag_id in dag_ids:
            while True:
                try:
                    self.api("GET", f"/api/v2/dags/{dag_id}")
                    break
                except AirflowApiError:
                    if time.monotonic() > deadline:
                        errors = self.api("GET", "/api/v2/importErrors")
                        raise AirflowError(f"DAG {dag_id} was not parsed in {timeout_s:g}s; "
                                           f"import errors: {errors}") from None
                    time.sleep(1)

    def trigger(self, dag_id: str, run_id: str, conf: Mapping[str, Any] | None = None) -> None:
        self.api("POST", f"/api/v2/dags/{dag_id}/dagRuns",
                 {"dag_run_id": run_id, "logical_date": None, "conf": dict(conf or {})})

    def run_state(self, dag_id: str, run_id: str) -> str:
        return self.api("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")["state"]

    def wait_for_runs(self, runs: Iterable[tuple[str, str]], timeout_s: float = 600.0) -> dict[tuple[str, str], str]:
        """The final state of each (dag_id, run_id)."""
        pending, states = set(runs), {}
        deadline = time.monotonic() + timeout_s
        while pending:
            for run in sorted(pending):
                state = self.run_state(*run)
                if state in TERMINAL_RUN_STATES:
                    states[run] = state
                    pending.discard(run)
            if pending and time.monotonic() > deadline:
                raise AirflowError(f"runs still going after {timeout_s:g}s: {sorted(pending)}")
            time.sleep(2)
        return states

    def task_instance(self, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
        return self.api("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}")

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int) -> str:
        """The try's log as text: each structured entry's event, then its exceptions' messages."""
        path = f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/logs/{try_number}?full_content=true"
        lines = []
        for entry in self.api("GET", path).get("content") or ():
            if not isinstance(entry, dict):
                lines.append(str(entry))
                continue
            lines.append(str(entry.get("event", "")))
            lines += [f"{e.get('exc_type')}: {e.get('exc_value')}" for e in entry.get("error_detail") or ()
                      if isinstance(e, dict)]
        return "\n".join(lines)


def _write_private(path: Path, text: str) -> None:
    """`text` in a file only its owner can read, whatever mode an earlier start left it with."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    """Signal the process group that `pid` leads, or `pid` alone when it leads none."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat from its third field on (the name, which may hold spaces, cut off)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _start_time(pid: int) -> str | None:
    stat = _stat(pid)
    return stat[19] if stat else None  # field 22, starttime


def _descendants(roots: Iterable[int]) -> dict[int, str]:
    """Every process below `roots`, with its start time (to tell it from a later one with its pid)."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and (stat := _stat(int(proc.name))) is not None:
            children.setdefault(int(stat[1]), []).append(int(proc.name))
    out: dict[int, str] = {}
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in out and (start := _start_time(child)) is not None:
                out[child] = start
                todo.append(child)
    return out
