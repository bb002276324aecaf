"""Airflow's public REST API (`/api/v2`), for tasks that act on other DAGs.

An Airflow 3 task has no access to the metadata database, so pausing a table's writer DAGs and
watching their runs (the restore DAG) goes through the api-server, as a user would. The API's
address and a user come from an Airflow connection (`hudi_ops_airflow_api`: host, port, login,
password; schema `https` for TLS), which `AirflowApiHook` owns; the user gets a JWT from
`/auth/token`, as the UI's login does. A call the api-server could not take just now (no answer, or
429, 502, 503, 504: it restarts or is busy) is tried again a few times with backoff.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

from hudi_ops.errors import HudiOpsError

DEFAULT_CONN_ID = "hudi_ops_airflow_api"
#: answers that say "not now" rather than "no"
RETRY_STATUSES = frozenset({429, 502, 503, 504})
RETRIES = 4
BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
#: task instances an executor has or runs: they go on even once their DAG is paused
ACTIVE_TASK_STATES = ("queued", "running", "restarting", "deferred")


class AirflowApiError(HudiOpsError):
    """The api-server could not be reached, or refused a call."""


class _NotNow(AirflowApiError):
    """The api-server did not take the call just now: worth another try."""


class AirflowApi:
    def __init__(self, url: str, username: str | None = None, password: str | None = None, *,
                 timeout_s: float = 60.0, retries: int = RETRIES) -> None:
        self.url, self.username, self.password, self.timeout_s = url.rstrip("/"), username, password, timeout_s
        self.retries = retries
        self._token: str | None = None

    def call(self, method: str, path: str, body: Any = None, *, auth: bool = True,
             retries: int | None = None) -> Any:
        """The answer's JSON; `retries` (default the client's) more tries, with backoff, when not now."""
        tries = 1 + (self.retries if retries is None else retries)
        for attempt in range(tries):
            try:
                return self._call(method, path, body, auth)
            except _NotNow as e:
                if attempt + 1 == tries:
                    raise AirflowApiError(f"{e} (after {tries} tries)") from e
                time.sleep(min(BACKOFF_S * 2 ** attempt, MAX_BACKOFF_S))
        raise AssertionError("unreachable")

    def _call(self, method: str, path: str, body: Any, auth: bool) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token()}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = response.read().decode()
        except urllib.error.HTTPError as e:
            with e:
                kind = _NotNow if e.code in RETRY_STATUSES else AirflowApiError
                raise kind(f"{method} {path}: HTTP {e.code} {e.read().decode(errors='replace')[:1000]}") from e
        except OSError as e:  # no answer: refused, reset, timed out
            raise _NotNow(f"{method} {self.url}{path}: {e}") from e
        try:
            return json.loads(payload or "null")
        except ValueError as e:
            raise AirflowApiError(f"{method} {self.url}{path} answered with something not JSON: "
                                  f"{payload[:200]!r}; is the connection the api-server's address?") from e

    def field(self, method: str, path: str, name: str, body: Any = None) -> Any:
        """One field of the answer to a call."""
        answer = self.call(method, path, body)
        if not isinstance(answer, dict) or name not in answer:
            raise AirflowApiError(f"{method} {self.url}{path} answered without `{name}`: {str(answer)[:200]}")
        return answer[name]

    def token(self) -> str:
        if self._token is None:
            body = {"username": self.username, "password": self.password} if self.username else None
            answer = self.call("POST" if body else "GET", "/auth/token", body, auth=False)
            if not isinstance(answer, dict) or "access_token" not in answer:
                raise AirflowApiError(f"{self.url}/auth/token gave no access_token: {str(answer)[:200]}")
            self._token = answer["access_token"]
        return self._token

    def is_paused(self, dag_id: str) -> bool:
        return bool(self.field("GET", f"/api/v2/dags/{_quote(dag_id)}", "is_paused"))

    def set_paused(self, dag_id: str, paused: bool) -> None:
        self.field("PATCH", f"/api/v2/dags/{_quote(dag_id)}", "is_paused", {"is_paused": paused})

    def active_tasks(self, dag_id: str, states: Sequence[str] = ACTIVE_TASK_STATES) -> list[str]:
        """`run_id/task_id` of the DAG's task instances in `states`, across its runs."""
        query = urllib.parse.urlencode([("state", s) for s in states] + [("limit", "100")])
        tasks = self.field("GET", f"/api/v2/dags/{_quote(dag_id)}/dagRuns/~/taskInstances?{query}", "task_instances")
        return [f"{t['dag_run_id']}/{t['task_id']}" for t in tasks]


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


class AirflowApiHook(BaseHook):
    """The `hudi_ops_airflow_api` connection (type http: host, port, login, password; schema `https` for
    TLS) and a client of the api-server it names."""

    conn_name_attr = "airflow_api_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = "http"
    hook_name = "Airflow REST API (hudi-ops)"

    def __init__(self, airflow_api_conn_id: str = DEFAULT_CONN_ID) -> None:
        super().__init__()
        self.airflow_api_conn_id = airflow_api_conn_id

    def get_conn(self) -> AirflowApi:
        conn_id = self.airflow_api_conn_id
        try:
            conn = self.get_connection(conn_id)
        except AirflowNotFoundException as e:
            raise AirflowApiError(
                f"no Airflow connection {conn_id}: add one (e.g. AIRFLOW_CONN_{conn_id.upper()}='{{\"conn_type\": "
                f"\"http\", \"host\": \"...\", \"port\": 8080, \"login\": \"...\", \"password\": \"...\"}}') with "
                "the api-server's address and a user who may pause DAGs") from e
        if not conn.host:
            raise AirflowApiError(f"connection {conn_id} has no host: set it to the api-server's address "
                                  "(host, port, login and password of a user who may pause DAGs)")
        scheme = conn.schema or "http"
        host = conn.host if "://" in conn.host else f"{scheme}://{conn.host}"
        return AirflowApi(f"{host}:{conn.port}" if conn.port else host, conn.login, conn.password)
