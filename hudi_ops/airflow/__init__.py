"""hudi-ops as an Airflow provider: hook, operators, sensor (registered by the package's entry point)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any


def get_provider_info() -> dict[str, Any]:
    """What Airflow's ProvidersManager reads through the `apache_airflow_provider` entry point."""
    try:
        installed = version("hudi-ops")
    except PackageNotFoundError:
        installed = "0.0.0"
    return {
        "package-name": "hudi-ops",
        "name": "hudi-ops",
        "description": "Apache Hudi tables written by many pipelines at once: Spark jobs under ZooKeeper OCC.",
        "versions": [installed],
        "connection-types": [
            {"hook-class-name": "hudi_ops.airflow.hook.HudiHook", "connection-type": "hudi_zookeeper"},
        ],
    }
