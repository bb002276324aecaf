"""The REST client the restore DAG pauses writers with: a real HTTP server on loopback that is busy for a
while is asked again with backoff; a refusal is not; the hook builds the client from its connection."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hudi_ops.airflow.hooks.airflow_api import AirflowApi, AirflowApiError, AirflowApiHook
from local_platform.ports import free_port


class _Server:
    """Answers `/auth/token`, and `/api/v2/dags/<id>` with the statuses queued for it, then 200."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.seen: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                server.seen.append(f"{self.command} {self.path}")
                if self.path == "/auth/token":
                    status, body = 201, {"access_token": "t"}
                else:
                    status = server.statuses.pop(0) if server.statuses else 200
                    body = {"is_paused": True} if status == 200 else {"detail": "not now"}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.http.shutdown()
    s.http.server_close()


def test_a_busy_api_server_is_asked_again_with_backoff(server):
    server.statuses = [503, 502]
    assert AirflowApi(server.url, "admin", "pw").is_paused("trips_ingest") is True
    assert server.seen.count("GET /api/v2/dags/trips_ingest") == 3


def test_a_refusal_is_not_asked_again(server):
    server.statuses = [404]
    with pytest.raises(AirflowApiError, match="HTTP 404"):
        AirflowApi(server.url, "admin", "pw").is_paused("nope")
    assert server.seen.count("GET /api/v2/dags/nope") == 1


def test_an_api_server_that_never_answers_fails_after_its_tries():
    with pytest.raises(AirflowApiError, match=r"\(after 3 tries\)"):
        AirflowApi(f"http://127.0.0.1:{free_port()}", retries=2).call("GET", "/api/v2/monitor/health", auth=False)


def test_the_hook_makes_the_client_from_its_connection(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_HUDI_OPS_AIRFLOW_API", json.dumps(
        {"conn_type": "http", "host": "127.0.0.1", "port": 8080, "login": "admin", "password": "pw"}))
    client = AirflowApiHook().get_conn()
    assert (client.url, client.username, client.password) == ("http://127.0.0.1:8080", "admin", "pw")
    with pytest.raises(AirflowApiError, match="no Airflow connection missing_api: add one"):
        AirflowApiHook("missing_api").get_conn()
