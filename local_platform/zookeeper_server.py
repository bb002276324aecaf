"""A real ZooKeeper server for the tests and the demo: loopback only, a tmp data dir.

Its jars: `$HUDI_OPS_ZOOKEEPER_CLASSPATH` when set; else ZooKeeper's server and what it needs at run time,
fetched from Maven into hudi-ops' jar cache (`python -m local_platform.jars fetch zookeeper`, which
make runs); else Debian's `zookeeper` package.

`stop()` ends the process (SIGTERM, then SIGKILL) and `start()` brings it back on the same port and data
dir, so sessions and znodes survive a restart the way they do on a real ensemble.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from kazoo.client import KazooClient

from hudi_ops.errors import ConfigError
from hudi_ops.maven import MavenArtifact, fetched, jars_dir
from local_platform.ports import free_port
from local_platform.server_process import ServerProcess

CLASSPATH_ENV = "HUDI_OPS_ZOOKEEPER_CLASSPATH"
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
RELEASE = "3.9.5"
#: ZooKeeper's pom leaves metrics-core and snappy-java to its distribution (`provided`) and its logging
#: binding optional; the server needs all three. TLS's native netty is not used on loopback.
SERVER_ARTIFACTS = (
    MavenArtifact("org.apache.zookeeper", "zookeeper", RELEASE,
                  exclusions=("io.netty:netty-tcnative-boringssl-static",)),
    MavenArtifact("io.dropwizard.metrics", "metrics-core", "4.1.12.1"),
    MavenArtifact("org.xerial.snappy", "snappy-java", "1.1.10.5"),
    MavenArtifact("org.slf4j", "slf4j-simple", "2.0.13"),
)
DEBIAN_JARS = Path("/usr/share/java")


def maven_jars_dir() -> Path:
    return jars_dir() / f"zookeeper-{RELEASE}"


def zookeeper_classpath(debian_jars: Path | None = None) -> str | None:
    """The server's classpath, or None when there is none: see the module's docstring."""
    debian_jars = debian_jars or DEBIAN_JARS
    if os.environ.get(CLASSPATH_ENV):
        return os.environ[CLASSPATH_ENV]
    if fetched(maven_jars_dir()):
        return f"{maven_jars_dir()}/*"
    if any(debian_jars.glob("zookeeper-3*.jar")):
        return f"{debian_jars}/*"
    return None


def require_zookeeper() -> str:
    """The server's classpath, or a ConfigError that names the fix."""
    if shutil.which("java") is None:
        raise ConfigError("starting ZooKeeper needs `java` (17) on PATH")
    classpath = zookeeper_classpath()
    if classpath is None:
        raise ConfigError("ZooKeeper's jars are not fetched: run `python -m local_platform.jars fetch zookeeper` "
                          f"(make does), install Debian's `zookeeper`, or set {CLASSPATH_ENV}")
    return classpath


class ZookeeperServer(ServerProcess):
    def __init__(self, root: Path | None = None, *, port: int | None = None, tick_ms: int = 500) -> None:
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="hudi-ops-zk-"))
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self.url = f"{self.host}:{self.port}"
        self.data_dir = self.root / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config_path = self.root / "zoo.cfg"
        self.log_path = self.root / "zookeeper.log"
        # sessions between 2 and 120 ticks; a small tick expires sessions promptly
        self.config_path.write_text(
            "\n".join(
                [
                    f"tickTime={tick_ms}",
                    f"dataDir={self.data_dir}",
                    f"clientPort={self.port}",
                    "clientPortAddress=127.0.0.1",
                    "maxSessionTimeout=60000",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=",
                    "maxClientCnxns=0",
                    "",
                ]
            )
        )
        self.classpath = require_zookeeper()
        super().__init__()

    def start(self, timeout_s: float = 30.0) -> None:
        if self.running:
            return
        self._launch(["java", "-Xmx256m", "-cp", self.classpath, MAIN_CLASS, str(self.config_path)])
        self._wait_ready(timeout_s)

    def _wait_ready(self, timeout_s: float) -> None:
        self._until_ready("ZooKeeper", self._answers, timeout_s)

    def _answers(self) -> bool:
        """Whether a kazoo session (which retries every 50-200 ms) comes up within 2 s and reads the root."""
        client = KazooClient(hosts=self.url, timeout=4.0,
                             connection_retry={"max_tries": -1, "delay": 0.05, "max_delay": 0.2})
        try:
            client.start(timeout=2.0)
        except Exception:  # kazoo's timeout: it has stopped the client itself
            return False
        try:
            client.get_children("/")
            return True
        finally:
            client.stop()
            client.close()
