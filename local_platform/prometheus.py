"""Prometheus and its push gateway for the tests (and anyone trying Hudi's metrics locally): Debian's
`prometheus` and `prometheus-pushgateway`, on loopback, their data in a folder of their own.

Hudi's jobs push to the gateway (its PROMETHEUS_PUSHGATEWAY reporter: a batch job's metrics outlive
it there), Prometheus scrapes the gateway every second and answers queries on its HTTP API, as a
production Prometheus would with its own scrape interval.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from hudi_ops.errors import ConfigError
from local_platform.ports import free_port
from local_platform.server_process import ServerProcess

SCRAPE_INTERVAL_S = 1


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ConfigError(f"`{name}` is not on PATH: install Debian's package of that name "
                          f"(`apt-get install {name}`; `make system-check` lists what the tests run)")
    return found


class _HttpServer(ServerProcess):
    name = ""

    def __init__(self, root: Path, port: int | None) -> None:
        super().__init__()
        self.root, self.port = root, port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = root / f"{self.name}.log"

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        self._until_ready(self.name, self._ready, timeout_s)

    def _ready(self) -> bool:
        """Whether its /-/ready answers 200."""
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False


class PushGateway(_HttpServer):
    """`.url`, `.host`, `.port`; `.start()`, `.stop()`."""

    name = "pushgateway"

    def __init__(self, root: Path, *, port: int | None = None) -> None:
        super().__init__(root, port)
        self.host = "127.0.0.1"

    def start(self) -> None:
        self._launch([_binary("prometheus-pushgateway"), f"--web.listen-address={self.host}:{self.port}",
                      f"--persistence.file={self.root / 'pushgateway.data'}"])
        self.wait_ready()


class Prometheus(_HttpServer):
    """A Prometheus scraping `targets` (host:port each); `.query(promql)` asks its HTTP API."""

    name = "prometheus"

    def __init__(self, root: Path, targets: list[str], *, port: int | None = None) -> None:
        super().__init__(root, port)
        self.config = root / "prometheus.yml"
        # honor_labels: the labels a job pushed (its `job`, Hudi's report labels) stay as pushed, not
        # the gateway's own; the format is YAML, of which JSON is a subset
        self.config.write_text(json.dumps({
            "global": {"scrape_interval": f"{SCRAPE_INTERVAL_S}s", "evaluation_interval": f"{SCRAPE_INTERVAL_S}s"},
            "scrape_configs": [{"job_name": "pushgateway", "honor_labels": True,
                                "static_configs": [{"targets": targets}]}],
        }, indent=2))

    def start(self) -> None:
        self._launch([_binary("prometheus"), f"--config.file={self.config}",
                      f"--web.listen-address=127.0.0.1:{self.port}", f"--storage.tsdb.path={self.root / 'tsdb'}"])
        self.wait_ready()

    def query(self, promql: str) -> list[dict[str, Any]]:
        """The instant vector `promql` evaluates to now: [{"metric": {labels}, "value": [time, "text"]}]."""
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as answer:
            body = json.load(answer)
        if body.get("status") != "success":
            raise RuntimeError(f"Prometheus refused {promql!r}: {body}")
        return body["data"]["result"]


class Monitoring:
    """A push gateway and the Prometheus that scrapes it, in `root` (a tmp folder unless given)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="hudi-ops-prometheus-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.gateway = PushGateway(self.root)
        self.prometheus = Prometheus(self.root, [f"{self.gateway.host}:{self.gateway.port}"])

    def start(self) -> None:
        self.gateway.start()
        self.prometheus.start()

    def cleanup(self) -> None:
        self.prometheus.stop()
        self.gateway.stop()
        shutil.rmtree(self.root, ignore_errors=True)
