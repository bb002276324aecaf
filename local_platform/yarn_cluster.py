"""A real YARN cluster on this machine, for the jobs' cluster deploy mode: Hadoop's ResourceManager and one
NodeManager, each in a JVM of its own started from their main classes, on loopback ports, with the
configuration folder a spark-submit takes as `HADOOP_CONF_DIR`.

Their jars are Hadoop 3.3.4's (the Hadoop client pip's pyspark 3.5 ships), fetched from Maven into
hudi-ops' jar cache by `python -m local_platform.jars fetch hadoop` (make does). The scheduler is YARN's FIFO
one (no queues to configure); the NodeManager offers `memory_mb` and runs containers as this user with
YARN's default executor; a container's logs stay in the NodeManager's log folder (no aggregation).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from hudi_ops.errors import ConfigError
from hudi_ops.maven import MavenArtifact, fetched, jars_dir
from local_platform.ports import free_port

HADOOP_RELEASE = "3.3.4"
#: the ResourceManager's web services reach into the timeline service's classes, whatever its settings
ARTIFACTS = tuple(MavenArtifact("org.apache.hadoop", a, HADOOP_RELEASE) for a in (
    "hadoop-yarn-server-resourcemanager", "hadoop-yarn-server-nodemanager", "hadoop-yarn-server-timelineservice",
    "hadoop-common"))
RESOURCE_MANAGER = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
NODE_MANAGER = "org.apache.hadoop.yarn.server.nodemanager.NodeManager"
#: the daemons' web apps build their routes with Guice 4's cglib, which Java 17 allows only with these
_OPENS = [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
    "java.lang", "java.lang.reflect", "java.util", "java.io", "java.net", "java.nio", "sun.nio.ch")]


def hadoop_jars_dir() -> Path:
    """Named after the artifacts, so that another list is fetched anew."""
    digest = hashlib.sha256(" ".join(a.coordinates for a in ARTIFACTS).encode()).hexdigest()[:8]
    return jars_dir() / f"hadoop-yarn-{HADOOP_RELEASE}-{digest}"


def require_hadoop() -> str:
    """The daemons' classpath, or a ConfigError that names the fix."""
    if not fetched(hadoop_jars_dir()):
        raise ConfigError("YARN's jars are not fetched: run `python -m local_platform.jars fetch hadoop` (make does)")
    return f"{hadoop_jars_dir()}/*"


def java_home() -> str:
    """The JDK the daemons and their containers run (a container's environment keeps JAVA_HOME alone)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    if java is None:
        raise ConfigError("YARN needs `java` (17) on PATH, or JAVA_HOME")
    return str(Path(os.path.realpath(java)).parents[1])


class YarnCluster:
    """`with YarnCluster(root) as yarn:` a ResourceManager and a NodeManager until the block ends."""

    def __init__(self, root: Path, *, memory_mb: int = 6144, vcores: int = 4) -> None:
        """`root`: the cluster's configuration, local and log folders (the caller's to remove)."""
        self.root, self.memory_mb = Path(root), memory_mb
        self.conf_dir = self.root / "conf"
        self.classpath = require_hadoop()
        self.java_home = java_home()
        ports = {name: free_port() for name in (
            "rm", "scheduler", "tracker", "admin", "rm_web", "nm", "localizer", "nm_web")}
        self.web_url = f"http://127.0.0.1:{ports['rm_web']}"
        self.rm_address = f"127.0.0.1:{ports['rm']}"
        for folder in ("conf", "local", "logs", "tmp", "staging"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        _write_site(self.conf_dir / "core-site.xml", {
            "fs.defaultFS": "file:///", "hadoop.tmp.dir": str(self.root / "tmp")})
        _write_site(self.conf_dir / "yarn-site.xml", {
            "yarn.resourcemanager.hostname": "127.0.0.1",
            "yarn.resourcemanager.address": self.rm_address,
            "yarn.resourcemanager.scheduler.address": f"127.0.0.1:{ports['scheduler']}",
            "yarn.resourcemanager.resource-tracker.address": f"127.0.0.1:{ports['tracker']}",
            "yarn.resourcemanager.admin.address": f"127.0.0.1:{ports['admin']}",
            "yarn.resourcemanager.webapp.address": f"127.0.0.1:{ports['rm_web']}",
            "yarn.resourcemanager.scheduler.class":
                "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler",
            "yarn.scheduler.minimum-allocation-mb": "256",
            "yarn.scheduler.maximum-allocation-mb": str(memory_mb),
            "yarn.nodemanager.hostname": "127.0.0.1",
            "yarn.nodemanager.address": f"127.0.0.1:{ports['nm']}",
            "yarn.nodemanager.localizer.address": f"127.0.0.1:{ports['localizer']}",
            "yarn.nodemanager.webapp.address": f"127.0.0.1:{ports['nm_web']}",
            "yarn.nodemanager.resource.memory-mb": str(memory_mb),
            "yarn.nodemanager.resource.cpu-vcores": str(vcores),
            "yarn.nodemanager.local-dirs": str(self.root / "local"),
            "yarn.nodemanager.log-dirs": str(self.root / "logs"),
            # a test machine's memory and disk: no container killed for virtual memory, no disk full at 90 %
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.pmem-check-enabled": "false",
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "100.0",
            "yarn.log-aggregation-enable": "false",
            # a finished container's folder (its launch script, its files) stays an hour: what ran can be read
            "yarn.nodemanager.delete.debug-delay-sec": "3600",
        })
        # the daemons log to their own files (the root's *.log), warnings and up
        (self.conf_dir / "log4j.properties").write_text(
            "log4j.rootLogger=WARN,console\nlog4j.appender.console=org.apache.log4j.ConsoleAppender\n"
            "log4j.appender.console.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n\n")
        self._processes: list[subprocess.Popen[bytes]] = []
        atexit.register(self.stop)

    def __enter__(self) -> YarnCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def env(self) -> dict[str, str]:
        """What a spark-submit to this cluster needs in its environment."""
        return {"HADOOP_CONF_DIR": str(self.conf_dir), "JAVA_HOME": self.java_home}

    def spark_conf(self, python: str) -> dict[str, str]:
        """What a spark-submit to this cluster adds, as a gateway's spark-defaults.conf would: Spark's own
        jars taken from the node (pip's pyspark, so no 300 MB upload per job), the staging folder on the
        file system the node shares, `python` as the nodes' interpreter, and containers sized for a
        laptop (a driver and one executor of 768 MB each, JVMs for small jobs: hudi_ops.spark.driver_jvm)."""
        import pyspark  # only the caller of this needs Spark

        from hudi_ops.spark.driver_jvm import SMALL_JOB_FLAGS

        spark_jars = Path(pyspark.__file__).parent / "jars"
        small = " ".join(SMALL_JOB_FLAGS)
        return {"spark.yarn.jars": f"local:{spark_jars}/*", "spark.yarn.stagingDir": (self.root / "staging").as_uri(),
                "spark.pyspark.python": python, "spark.driver.memory": "768m", "spark.executor.memory": "768m",
                "spark.executor.instances": "1", "spark.driver.defaultJavaOptions": small,
                "spark.executor.defaultJavaOptions": small, "spark.yarn.am.extraJavaOptions": small}

    def start(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        self._start(RESOURCE_MANAGER, "resourcemanager")
        self._wait(lambda: self.api("/ws/v1/cluster/info")["clusterInfo"]["state"] == "STARTED", deadline,
                   "the ResourceManager to start")
        self._start(NODE_MANAGER, "nodemanager")
        # a node counts as active before the scheduler adds its memory: ready when both are in
        self._wait(lambda: _serving(self.api("/ws/v1/cluster/metrics")["clusterMetrics"], self.memory_mb), deadline,
                   "the NodeManager to register and its memory to reach the scheduler")

    def _start(self, main_class: str, name: str) -> None:
        command = [str(Path(self.java_home) / "bin" / "java"), "-Xmx512m", "-XX:+UseSerialGC", *_OPENS,
                   f"-Dhadoop.log.dir={self.root / 'logs'}", f"-Dyarn.log.dir={self.root / 'logs'}",
                   "-cp", os.pathsep.join([str(self.conf_dir), self.classpath]), main_class]
        env = {**os.environ, "JAVA_HOME": self.java_home, "HADOOP_CONF_DIR": str(self.conf_dir)}
        with open(self.root / f"{name}.log", "ab") as log:
            self._processes.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                                    stderr=subprocess.STDOUT, env=env, start_new_session=True))

    def _wait(self, ready: Any, deadline: float, what: str) -> None:
        while True:
            dead = [p for p in self._processes if p.poll() is not None]
            if dead:
                raise RuntimeError(f"YARN exited while waiting for {what}:\n{self.log_tail()}")
            try:
                if ready():
                    return
            except (urllib.error.URLError, OSError, KeyError, ValueError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"timed out waiting for {what}:\n{self.log_tail()}")
            time.sleep(0.5)

    def api(self, path: str) -> dict[str, Any]:
        """The ResourceManager's REST API (`/ws/v1/cluster/...`), as JSON."""
        request = urllib.request.Request(self.web_url + path, headers={"Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def applications(self) -> list[dict[str, Any]]:
        return (self.api("/ws/v1/cluster/apps").get("apps") or {}).get("app", [])

    def stop(self, grace_s: float = 15.0) -> None:
        processes, self._processes = self._processes, []
        for process in reversed(processes):  # the NodeManager first: it stops its containers
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(grace_s)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()

    def launch_scripts(self) -> list[Path]:
        """Every container's launch script (its command line and environment), finished ones too."""
        return sorted((self.root / "local").glob("nmPrivate/*/*/launch_container.sh"))

    def log_tail(self, chars: int = 3000) -> str:
        logs = sorted(self.root.glob("*.log"))
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-chars:]}" for p in logs)


def _serving(metrics: dict[str, Any], memory_mb: int) -> bool:
    return metrics["activeNodes"] >= 1 and metrics["totalMB"] >= memory_mb


def _write_site(path: Path, properties: dict[str, str]) -> None:
    rows = "".join(f"<property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
                   for k, v in properties.items())
    path.write_text(f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n')
