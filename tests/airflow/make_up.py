"""`make up` (`python -m local_platform.platform`) as a user starts it: a process of its own, read from its
output, reached through its REST API and CLI, stopped with Ctrl-C (SIGINT)."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from hudi_ops.airflow.dag_factory.factory import restore_dag_id
from hudi_ops.airflow.dag_factory.services_group import group_dag_id
from hudi_ops.airflow.dag_factory.tables_config import TABLES_CONFIG_ENV
from local_platform.demo.rfc22 import TABLE, Rfc22Demo
from local_platform.local_airflow import LocalAirflow
from local_platform.ports import free_port
from tests.statsd_listener import StatsdListener

REPO = Path(__file__).resolve().parents[2]

RESTORE_DAG = restore_dag_id(TABLE)
#: a services group of four MERGE_ON_READ tables beside the demo's: each table's upserts after its first
#: commit, hence the log files of its one file slice
GROUP, GROUP_TABLES = "fleet", {"hot": 3, "warm": 2, "mild": 1, "cold": 0}
GROUP_DAG = group_dag_id(GROUP)
GROUP_COMPACTION = {"hoodie.compact.inline.max.delta.commits": "2"}  # 2 deltacommits: cold has 1 (its first)
#: the demo table's freshness goal in the tests, minutes
FRESHNESS_MINUTES = 0.25
#: a table fed by a topic of make up's broker, its ingest run by new messages alone (no schedule)
STREAM, STREAM_TOPIC = "stream", "stream-trips"


@dataclass(frozen=True)
class ZookeeperAddress:
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"{self.host}:{self.port}"


class MakeUp:
    """The platform on a free port with `tables_config` (None: the example table), home in `home`."""

    def __init__(self, home: Path, tables_config: Path | None, *, statsd: StatsdListener | None = None) -> None:
        """`statsd`: where its Airflow sends its metrics (Airflow's `[metrics]` settings in its environment)."""
        self.home, self.port, self.statsd = home, free_port(), statsd
        env = {k: v for k, v in os.environ.items() if k != TABLES_CONFIG_ENV}
        env.update(statsd.airflow_env() if statsd else {})
        if tables_config is not None:
            env[TABLES_CONFIG_ENV] = str(tables_config)
        self.marker = f"HUDI_OPS_TEST_PLATFORM={self.port}"
        env["HUDI_OPS_TEST_PLATFORM"] = str(self.port)  # inherited by every process it starts: found again
        self.process = subprocess.Popen(
            [sys.executable, "-m", "local_platform.platform", "--port", str(self.port), "--home", str(home)],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.seen: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()
        try:
            up = self.until(r"Airflow is up: (http://127\.0\.0\.1:\d+)  \(log in as admin / (\S+);", 300)
            self.url, self.password = up.groups()
            self.zookeeper = ZookeeperAddress("127.0.0.1", int(self.until(r"ZooKeeper on 127\.0\.0\.1:(\d+)", 5)[1]))
            self.kafka = self.until(r"Kafka on (127\.0\.0\.1:\d+)", 5)[1]  # its bootstrap servers
            # a metastore when a table has a catalog (the line before the tables config's)
            self.metastore = self.until(r"Hive Metastore on (thrift://127\.0\.0\.1:\d+)|tables config:", 5)[1]
            self.airflow = LocalAirflow.attach(home / "airflow")
        except BaseException:
            self.close()
            raise

    def _pump(self) -> None:
        """Its output lines as they come (the pipe closes when the process has exited)."""
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self._lines.put(line.rstrip("\n"))

    def until(self, pattern: str, timeout_s: float) -> re.Match[str]:
        """The first line from now on matching `pattern`."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._lines.get(timeout=max(deadline - time.monotonic(), 0.1))
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} within {timeout_s:g}s; output:\n"
                                     + "\n".join(self.seen[-40:])) from None
            self.seen.append(line)
            if found := re.search(pattern, line):
                return found

    def started(self) -> set[int]:
        """Processes whose environment holds the marker: everything the platform started, whatever session."""
        out = set()
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                environ = (proc / "environ").read_bytes()
            except OSError:
                continue
            if self.marker.encode() in environ:
                out.add(int(proc.name))
        return out - {self.process.pid}

    def close(self) -> None:
        """Whatever failed before: nothing of it may outlive the test."""
        if self.statsd is not None:
            self.statsd.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=60)
        for pid in alive(self.started() | {self.process.pid}):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait()
        self._reader.join(timeout=10)


def alive(pids: set[int]) -> set[int]:
    out = set()
    for pid in pids:
        try:
            if "zombie" not in Path(f"/proc/{pid}/status").read_text(errors="replace"):
                out.add(pid)
        except OSError:  # gone
            pass
    return out


def demo_platform(root: Path) -> tuple[Rfc22Demo, MakeUp]:
    """`make up` with the demo's table, a services group's tables and a Kafka-fed table (none written yet),
    its Airflow's metrics sent to a StatsD listener."""
    demo = Rfc22Demo(root, say=lambda _: None)
    config = demo.write_tables_config()
    raw = yaml.safe_load(config.read_text())
    # the group's ticks are the tests' own runs: its cron fires once a year
    # a goal every ingest run with work misses (spark-submit alone takes longer): its deadline alert fires
    raw["tables"][TABLE]["freshness"] = FRESHNESS_MINUTES
    raw["services_groups"] = {GROUP: {"budget": 2, "policy": "need", "schedule": "0 0 1 1 *"}}
    for name in GROUP_TABLES:
        raw["tables"][name] = {"base_path": str(root / "group" / name), "record_key": "trip_id",
                               "partition_field": "dt", "ordering_field": "ts", "table_type": "MERGE_ON_READ",
                               "services": {"group": GROUP, "compaction": GROUP_COMPACTION}}
    raw["tables"][STREAM] = {"base_path": str(root / STREAM), "record_key": "trip_id", "partition_field": "dt",
                             "ordering_field": "ts", "table_type": "MERGE_ON_READ",
                             "ingest": {"source_kind": "kafka", "kafka_topic": STREAM_TOPIC, "on_new_messages": True}}
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    return demo, MakeUp(root / "up", config, statsd=StatsdListener())
