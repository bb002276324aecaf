"""hudi-ops as an Airflow provider (the package's `apache_airflow_provider` entry point): its hook, operators,
sensors, trigger and connection type, declared as Airflow 3.2 reads them without importing the hook (the
connection form's fields and behaviour included)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from hudi_ops.options.occ import DEFAULT_LOCK_BASE_PATH

INTEGRATION = "Apache Hudi"
HOOK_NAME = "Hudi ZooKeeper lock"
#: the `hudi_zookeeper` connection's extras; each one but lock_key is also a hoodie.write.lock.zookeeper.* key
_LOCK_FIELDS = {
    "base_path": ("Lock base path", "The znode under which every table's lock lives.", DEFAULT_LOCK_BASE_PATH),
    "lock_key": ("Lock key", "The lock's znode under the base path; empty: the table's name.", None),
    "session_timeout_ms": ("Session timeout (ms)", "How long ZooKeeper keeps a silent job's lock.", None),
    "connection_timeout_ms": ("Connection timeout (ms)", "How long a job waits to reach ZooKeeper.", None),
}


def get_provider_info() -> dict[str, Any]:
    """What Airflow's ProvidersManager reads through the `apache_airflow_provider` entry point."""
    try:
        installed = version("hudi-ops")
    except PackageNotFoundError:
        installed = "0.0.0"
    modules = {
        "hooks": ["hudi_ops.airflow.hooks.zookeeper_lock"],
        "operators": ["hudi_ops.airflow.operators.spark_jobs", "hudi_ops.airflow.operators.table_services",
                      "hudi_ops.airflow.operators.writer_pause"],
        "sensors": ["hudi_ops.airflow.sensors.commit", "hudi_ops.airflow.operators.writer_pause"],
        "triggers": ["hudi_ops.airflow.triggers.yarn_application"],
    }
    return {
        "package-name": "hudi-ops",
        "name": "hudi-ops",
        "description": "Apache Hudi tables written by many pipelines at once: Spark jobs under ZooKeeper OCC.",
        "versions": [installed],
        "integrations": [{"integration-name": INTEGRATION, "external-doc-url": "https://hudi.apache.org/",
                          "tags": ["software"]}],
        **{kind: [{"integration-name": INTEGRATION, "python-modules": names}] for kind, names in modules.items()},
        "connection-types": [{
            "hook-class-name": "hudi_ops.airflow.hooks.zookeeper_lock.ZookeeperLockHook",
            "connection-type": "hudi_zookeeper",
            "hook-name": HOOK_NAME,
            "ui-field-behaviour": {
                "hidden-fields": ["schema", "login", "password"],
                "relabeling": {"host": "ZooKeeper host(s), comma separated", "port": "ZooKeeper port"},
                "placeholders": {"host": "zk1,zk2,zk3", "port": "2181"},
            },
            "conn-fields": {
                name: {"label": label, "description": text,
                       "schema": {"type": ["string", "null"], **({"default": default} if default else {})}}
                for name, (label, text, default) in _LOCK_FIELDS.items()
            },
        }],
    }
