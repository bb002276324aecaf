"""`make up`: the platform stays up on loopback with the example table's DAGs, and Ctrl-C (SIGINT) stops
everything it started."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from hudi_ops.airflow.airflow_api import AirflowApi
from hudi_ops.airflow.dag_factory import TABLES_CONFIG_ENV
from hudi_ops.demo.ports import free_port

REPO = Path(__file__).resolve().parents[2]
TABLE_DAGS = {"hudi_ingest__trips", "hudi_backfill__trips", "hudi_services__trips", "hudi_restore__trips"}


def _lines(process: subprocess.Popen[str]) -> tuple[queue.Queue[str], threading.Thread]:
    """The process's output lines as they come, and the thread that reads them (it ends, closing the pipe,
    when the process has exited)."""
    out: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        with process.stdout:
            for line in process.stdout:
                out.put(line.rstrip("\n"))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    return out, reader


def _until(lines: queue.Queue[str], pattern: str, timeout_s: float, seen: list[str]) -> re.Match[str]:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
        except queue.Empty:
            raise AssertionError(f"no line matching {pattern!r} within {timeout_s:g}s; output:\n"
                                 + "\n".join(seen[-40:])) from None
        seen.append(line)
        if found := re.search(pattern, line):
            return found


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _started_by(marker: str) -> set[int]:
    """Processes whose environment holds `marker`: everything the platform started, whatever session."""
    out = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ:
            out.add(int(proc.name))
    return out


def _alive(pids: set[int]) -> set[int]:
    out = set()
    for pid in pids:
        try:
            if "zombie" not in Path(f"/proc/{pid}/status").read_text(errors="replace"):
                out.add(pid)
        except OSError:  # gone
            pass
    return out


def test_make_up_serves_the_example_tables_dags_on_loopback_and_stops_everything_on_sigint(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != TABLES_CONFIG_ENV}
    marker = f"HUDI_OPS_TEST_PLATFORM={port}"
    env["HUDI_OPS_TEST_PLATFORM"] = str(port)  # inherited by every process it starts: found again below
    process = subprocess.Popen(
        [sys.executable, "-m", "hudi_ops.demo.platform", "--port", str(port), "--home", str(tmp_path / "up")],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    (lines, reader), seen = _lines(process), []
    try:
        up = _until(lines, r"Airflow is up: (http://127\.0\.0\.1:\d+)  \(log in as admin / (\S+);", 300, seen)
        url, password = up.groups()
        assert url == f"http://127.0.0.1:{port}"
        zookeeper_port = int(_until(lines, r"ZooKeeper on 127\.0\.0\.1:(\d+)", 5, seen).group(1))
        api = AirflowApi(url, "admin", password)
        health = api.call("GET", "/api/v2/monitor/health", auth=False)
        assert {c: health[c]["status"] for c in ("metadatabase", "scheduler", "dag_processor", "triggerer")} == \
            dict.fromkeys(("metadatabase", "scheduler", "dag_processor", "triggerer"), "healthy")
        deadline = time.monotonic() + 120
        while (dags := {d["dag_id"] for d in api.call("GET", "/api/v2/dags")["dags"]}) < TABLE_DAGS:
            assert time.monotonic() < deadline, f"the example table's DAGs were not parsed: {dags}"
            time.sleep(2)
        pools = {p["name"]: p["slots"] for p in api.call("GET", "/api/v2/pools")["pools"]}
        assert pools["hudi_services__trips"] == 1
        assert (tmp_path / "up" / "tables.yaml").is_file() and (tmp_path / "up" / "data" / "landing").is_dir()
        started = _started_by(marker) - {process.pid}
        assert len(started) >= 5  # ZooKeeper and the four Airflow components, at least

        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=90) == 0, "\n".join(seen)
        _until(lines, r"^stopped$", 5, seen)
        assert not _listening(port) and not _listening(zookeeper_port)
        deadline = time.monotonic() + 10
        while left := _alive(started | _started_by(marker)):
            assert time.monotonic() < deadline, f"processes left running after Ctrl-C: {left}"
            time.sleep(0.5)
    finally:  # whatever failed above: nothing of it may outlive the test
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=60)
        for pid in _alive(_started_by(marker) | {process.pid}):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()
        reader.join(timeout=10)
