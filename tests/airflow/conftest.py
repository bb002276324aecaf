"""Airflow for the tests: a temporary AIRFLOW_HOME with SQLite and a dags folder the tests fill.

Airflow reads its configuration when first imported, so this runs before any test imports it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hudi_ops.spark.launch import LOOPBACK_CONF

REPO_DAGS = Path(__file__).resolve().parents[2] / "dags"
#: kept after the run, for people to look at (the browser tests' screenshots)
ARTIFACTS = Path(os.environ.get("HUDI_OPS_TEST_ARTIFACTS") or REPO_DAGS.parent / "test-artifacts")
HOME = Path(tempfile.mkdtemp(prefix="hudi-ops-airflow-"))
atexit.register(shutil.rmtree, HOME, ignore_errors=True)
DAGS = HOME / "dags"
DAGS.mkdir()
os.environ.update({
    "AIRFLOW_HOME": str(HOME),
    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{HOME}/airflow.db",
    "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[1]"}),
})
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

#: Spark settings for every job the tests submit: no UI, loopback only
SPARK_CONF = dict(LOOPBACK_CONF)


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """This test's folder of artifacts, emptied for the run: $HUDI_OPS_TEST_ARTIFACTS/<test> (default
    test-artifacts/ in the repo)."""
    path = ARTIFACTS / request.node.name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


@contextlib.contextmanager
def dag_in_folder(dag_id: str, source: str) -> Iterator[Any]:
    """The DAG of a DAG file written into the dags folder (where `dag.test()` needs it) for the block."""
    path = DAGS / f"{dag_id}.py"
    path.write_text(source)
    from airflow.dag_processing.dagbag import DagBag

    try:
        bag = DagBag(dag_folder=str(path))
        assert bag.import_errors == {}
        yield bag.get_dag(dag_id)
    finally:
        path.unlink()


@contextlib.contextmanager
def repo_dags(config: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
              refusals: bool = False) -> Iterator[Any]:
    """The repo's DAG files in the dags folder, reading `config` as their tables config, for the block;
    with no import error unless `refusals` (a config that refuses a table)."""
    path = tmp_path / "tables.yaml"
    path.write_text(yaml.safe_dump(config))
    monkeypatch.setenv("HUDI_OPS_TABLES_CONFIG", str(path))
    dag_files = [DAGS / name for name in ("hudi_ops_tables.py", "hudi_ops_tables_refused.py")]
    for dag_file in dag_files:
        shutil.copy(REPO_DAGS / dag_file.name, dag_file)
    from airflow.dag_processing.dagbag import DagBag

    try:
        bag = DagBag(dag_folder=str(DAGS))
        assert refusals or bag.import_errors == {}
        yield bag
    finally:
        for dag_file in dag_files:
            dag_file.unlink()


def run_states(run: Any) -> dict[str, str]:
    """Task id -> state of a `dag.test()` run."""
    return {t.task_id: t.state for t in run.get_task_instances()}


@pytest.fixture(scope="session")
def airflow_db():
    from airflow.utils import db

    db.initdb()


ZOOKEEPER_CONN_ENV = "AIRFLOW_CONN_HUDI_ZOOKEEPER_DEFAULT"


def zookeeper_conn(zookeeper: Any) -> str:
    """The hudi_zookeeper_default connection of the session's ZooKeeper, as an environment variable holds it."""
    host, port = zookeeper.url.rsplit(":", 1)
    return json.dumps({"conn_type": "hudi_zookeeper", "host": host, "port": int(port),
                       "extra": {"base_path": "/hudi-ops-airflow-tests", "session_timeout_ms": "10000"}})


@pytest.fixture
def zookeeper_connection(zookeeper, monkeypatch):
    """The hudi_zookeeper_default connection, pointing at the session's ZooKeeper."""
    monkeypatch.setenv(ZOOKEEPER_CONN_ENV, zookeeper_conn(zookeeper))


@pytest.fixture(scope="module")
def node_python(tmp_path_factory):
    """A Python with hudi-ops' dependencies and without hudi-ops, as a cluster's nodes have."""
    venv = tmp_path_factory.mktemp("node") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as a container's: no checkout in sight
    probe = subprocess.run([str(python), "-c", "import pyarrow, fastavro, kazoo\nimport hudi_ops"],
                           capture_output=True, text=True, cwd=venv, env=clean)
    assert "No module named 'hudi_ops'" in probe.stderr, probe.stderr
    return str(python)


@pytest.fixture(scope="module")
def browser():
    """One chromium for a module's browser tests."""
    from tests.airflow.browser import Browser

    opened = Browser()
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    """`make up` with the demo's table, a services group's and a Kafka-fed one: a module's Airflow, ZooKeeper
    and broker (tests/airflow/make_up.py)."""
    from tests.airflow.make_up import demo_platform

    demo, up = demo_platform(tmp_path_factory.mktemp("rfc22"))
    yield demo, up
    up.close()
