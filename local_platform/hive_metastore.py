"""A real Hive Metastore for the tests, `make up` and the demo: Hive 2.3.9's thrift server from the jars
PySpark ships (hive-metastore, Derby, DataNucleus), on loopback, its Derby database and warehouse in its
folder (a tmp folder unless given: `make up` keeps its own under its home).

`stop()` ends the process and `start()` brings it back on the same port and database, with its
databases, tables and partitions, as a restarted metastore keeps them.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

from hudi_ops.errors import ConfigError
from local_platform.ports import free_port, port_open
from local_platform.server_process import ServerProcess

MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"


def pyspark_jars() -> Path:
    """The jars of the installed PySpark, where Hive's metastore, Derby and DataNucleus are."""
    try:
        import pyspark
    except ImportError as e:
        raise ConfigError("a Hive Metastore from PySpark's jars needs pyspark 3.5 installed "
                          "(`pip install -e '.[dev]'`, which make does)") from e
    jars = Path(pyspark.__file__).parent / "jars"
    if not any(jars.glob("hive-metastore-*.jar")):
        raise ConfigError(f"no hive-metastore jar in {jars}: this PySpark was built without Hive; "
                          "install PySpark 3.5 from PyPI")
    return jars


class HiveMetastoreServer(ServerProcess):
    """`.uri` (`thrift://127.0.0.1:PORT`), `.start()`, `.stop(hard=False)`, `.cleanup()`."""

    def __init__(self, root: Path | None = None, *, port: int | None = None) -> None:
        if shutil.which("java") is None:
            raise ConfigError("starting a Hive Metastore needs `java` (17) on PATH")
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="hudi-ops-hms-"))
        self.port = port or free_port()
        self.uri = f"thrift://127.0.0.1:{self.port}"
        self.log_path = self.root / "metastore.log"
        self.warehouse = self.root / "warehouse"
        conf = self.root / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        settings = {
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={self.root / 'metastore_db'};create=true",
            # Derby's schema made on first use; Hive's schema tool is not in PySpark's jars
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            # Hive's asynchronous log4j2 appender needs LMAX's disruptor, which PySpark does not ship
            "hive.async.log.enabled": "false",
            "hive.metastore.warehouse.dir": str(self.warehouse),
            "hive.metastore.event.db.notification.api.auth": "false",
        }
        (conf / "hive-site.xml").write_text(
            "<configuration>\n" + "".join(
                f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
                for k, v in settings.items()) + "</configuration>\n")
        self.classpath = f"{conf}:{pyspark_jars()}/*"
        super().__init__()

    def start(self, timeout_s: float = 120.0) -> None:
        """Until the metastore accepts connections (it opens its port once its database is ready)."""
        self.launch()
        self.wait_ready(timeout_s)

    def launch(self) -> None:
        """The JVM, without waiting for it (`wait_ready` does): what starts beside it meanwhile."""
        if self.running:
            return
        # Derby's own log (derby.log) goes to the working directory: the server's folder
        self._launch(["java", "-Xmx512m", f"-Dderby.system.home={self.root}", "-cp", self.classpath, MAIN_CLASS,
                      "-p", str(self.port)], cwd=self.root)

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        self._until_ready("the Hive Metastore", lambda: port_open(self.port), timeout_s)

