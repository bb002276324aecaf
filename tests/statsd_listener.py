"""A StatsD server on loopback for the tests: it keeps every metric line it receives over UDP, as a
StatsD daemon (or Datadog's agent) would before aggregating them."""

from __future__ import annotations

import re
import socket
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """One line, `name,tag=value,...:value|type` (Airflow appends tags InfluxDB's way)."""

    name: str
    tags: dict[str, str]
    value: float
    kind: str  # c counter, g gauge, ms timer

    @classmethod
    def parse(cls, line: str) -> Metric | None:
        """The metric a line holds; None for a line of another shape."""
        found = re.fullmatch(r"([^:]+):([-+\d.eE]+)\|(\w+)(?:\|@[\d.]+)?", line)
        if found is None:
            return None
        head, value, kind = found.groups()
        name, *tags = head.split(",")
        try:
            return cls(name, dict(t.split("=", 1) for t in tags), float(value), kind)
        except ValueError:
            return None


class StatsdListener:
    """`.port`; `.metrics()` what arrived so far, of the names starting with one of `keep`; `.close()`."""

    def __init__(self, keep: tuple[str, ...] = ("airflow.hudi_ops.", "airflow.deadline_alerts.")) -> None:
        self.keep = keep
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.port = self._socket.getsockname()[1]
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._open = True
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def airflow_env(self, prefix: str = "airflow") -> dict[str, str]:
        """Airflow's `[metrics]` settings that send its StatsD metrics here, tags in the names."""
        return {"AIRFLOW__METRICS__STATSD_ON": "True", "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
                "AIRFLOW__METRICS__STATSD_PORT": str(self.port), "AIRFLOW__METRICS__STATSD_PREFIX": prefix,
                "AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED": "True"}

    def _receive(self) -> None:
        while self._open:
            try:
                data = self._socket.recv(65535)
            except (TimeoutError, OSError):
                continue
            with self._lock:
                self._lines.extend(line for line in data.decode(errors="replace").splitlines()
                                   if line.startswith(self.keep))

    def metrics(self, name_prefix: str = "") -> list[Metric]:
        with self._lock:
            lines = list(self._lines)
        return [m for m in map(Metric.parse, lines) if m is not None and m.name.startswith(name_prefix)]

    def wait_for(self, name: str, timeout_s: float = 10.0, count: int = 1, **tags: str) -> list[Metric]:
        """The metrics named `name` with `tags` among theirs, once `count` have arrived (UDP is not instant)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = [m for m in self.metrics(name) if m.name == name and tags.items() <= m.tags.items()]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    def close(self) -> None:
        self._open = False
        self._thread.join(timeout=5)
        self._socket.close()
