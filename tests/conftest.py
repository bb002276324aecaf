"""Fixtures shared by the integration and Airflow tests: ZooKeeper, Kafka, a Hive Metastore, the fixture
tables, one SparkSession, a local S3 server."""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hudi_ops.spark.launch import LOOPBACK_CONF
from local_platform.s3_server import S3Server
from tests.s3_lake import S3Lake
from tests.shared_data import unzip_fixture

#: the folders whose tests get the folder's marker (pyproject.toml lists the markers)
FOLDER_MARKS = {"unit": "unit", "component": "component", "airflow": "airflow"}


#: the fixtures whose tests get the fixture's marker
FIXTURE_MARKS = {"spark": "spark", "browser": "browser"}


def pytest_itemcollected(item: pytest.Item) -> None:
    """The tests of a module with a module-scoped fixture (an Airflow stack, a chromium, a compiled class)
    are one group for `make test`'s two workers (`--dist loadgroup`): run on one worker in the module's
    order. Marked as each is collected, before xdist reads the groups."""
    if _uses_a_module_fixture(item):
        item.add_marker(pytest.mark.xdist_group(str(item.path.relative_to(item.config.rootpath))))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test marked by its folder and by the expensive fixtures it uses: the session's SparkSession
    (`spark`: the modules that start spark-submit jobs of their own say so with `pytestmark`) and the
    module's chromium (`browser`). Outside the groups, each test goes to whichever worker is free."""
    for item in items:
        if mark := FOLDER_MARKS.get(item.path.parent.name):
            item.add_marker(mark)
        for fixture in set(FIXTURE_MARKS) & set(getattr(item, "fixturenames", ())):
            item.add_marker(FIXTURE_MARKS[fixture])
    # the modules with slow tests first, then the other Spark ones, the quick ones last (the workers take
    # work in this order, `--no-loadscope-reorder`): the quick tests fill the end instead of one worker
    # finishing a long test alone (a module's own order is kept)
    rank: dict[Path, int] = {}
    for item in items:
        here = 0 if item.get_closest_marker("slow") else 1 if item.get_closest_marker("spark") else 2
        rank[item.path] = min(rank.get(item.path, 2), here)
    items.sort(key=lambda item: rank[item.path])


def pytest_collection_finish(session: pytest.Session) -> None:
    """On a worker of `--dist loadgroup`, xdist has added each test's group to its id; a pytest whose ids
    it cannot change (9.2 with xdist 3.8) would spread a module's tests over both workers, each starting
    the module's fixtures again (two Airflow stacks): refused here, not found in the timings."""
    if session.config.getoption("loadgroup", False):
        ungrouped = [i.nodeid for i in session.items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
        if ungrouped:
            raise pytest.UsageError(f"pytest-xdist did not group {len(ungrouped)} tests (e.g. {ungrouped[0]}): "
                                    "use the pytest and pytest-xdist releases pyproject.toml pins")


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory):
    from local_platform.zookeeper_server import ZookeeperServer

    server = ZookeeperServer(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    yield server
    server.cleanup()


@pytest.fixture
def zookeeper(zookeeper_server):
    """A real ZooKeeper server on 127.0.0.1, one for the whole session: `.url`, `.stop()`, `.start()`.

    Tests that stop it must start it again; one that failed before it could is the only test that fails
    for it (started again here)."""
    zookeeper_server.start()
    return zookeeper_server


@pytest.fixture(scope="session")
def kafka_server(tmp_path_factory):
    from local_platform.kafka_server import KafkaServer

    server = KafkaServer(tmp_path_factory.mktemp("kafka"))
    server.start()
    yield server
    server.cleanup()


@pytest.fixture
def kafka(kafka_server):
    """A real Kafka broker (KRaft) on 127.0.0.1, one for the whole session: `.bootstrap_servers`, `.stop()`,
    `.start()`. Tests make topics of their own; tests that stop it must start it again, and one that failed
    before it could is the only test that fails for it (started again here, on its data)."""
    kafka_server.start()
    return kafka_server


@pytest.fixture(scope="session")
def hive_metastore_server(tmp_path_factory):
    """Launched, not yet waited for: the session's Spark starts beside it."""
    from local_platform.hive_metastore import HiveMetastoreServer

    server = HiveMetastoreServer(tmp_path_factory.mktemp("hive_metastore"))
    server.launch()
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
def monitoring(tmp_path_factory):
    """Debian's Prometheus push gateway and the Prometheus that scrapes it every second, on loopback: one
    per test run (local_platform.prometheus)."""
    from local_platform.prometheus import Monitoring

    started = Monitoring(tmp_path_factory.mktemp("prometheus"))
    try:
        started.start()
        yield started
    finally:  # a gateway up when Prometheus failed to start is stopped too
        started.cleanup()


@pytest.fixture
def hive_metastore(hive_metastore_server):
    """A real Hive Metastore (thrift, Derby) on 127.0.0.1, one for the whole session and the session's Spark
    catalog: `.uri`. Tests make databases of their own."""
    hive_metastore_server.start()
    return hive_metastore_server


@pytest.fixture
def database():
    """A database of the session's metastore for the test alone (made by the first sync to it)."""
    return f"lake_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def fixture_table(tmp_path_factory):
    """`fixture_table("sample_table/cow/v8_nonpartitioned")`: a table of ../shared/fixtures/hudi-rs (its zip's
    path without `.zip`), unpacked once per session; tests that change a table work on a copy of it."""
    root = tmp_path_factory.mktemp("hudi_rs_fixtures")
    unpacked: dict[str, Path] = {}

    def get(relative: str) -> Path:
        if relative not in unpacked:
            unpacked[relative] = unzip_fixture(f"{relative}.zip", root / relative.replace("/", "__"))
        return unpacked[relative]

    return get


#: loopback only, no UI: for the shared session and every spark-submit the tests start
SPARK_TEST_CONF = {"spark.ui.showConsoleProgress": "false", **LOOPBACK_CONF,
                   "spark.sql.shuffle.partitions": "2"}


@pytest.fixture(scope="session")
def spark(hive_metastore_server):
    """Hudi's session, whose catalog is the session's Hive Metastore: tables synced there read by name."""
    # Spark's Python workers must run this interpreter, or they miss pyarrow and hudi_ops
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from hudi_ops.spark.driver_jvm import DRIVER_JAVA_OPTIONS, SMALL_JOB_FLAGS
    from hudi_ops.spark.kafka_connector import kafka_jars
    from hudi_ops.spark.s3a import s3a_jars
    from hudi_ops.spark.session import require_hudi, session_builder

    builder = session_builder("hudi-ops-tests", master="local[2]")
    # the s3a connector for tables on the local S3 server and Spark's Kafka reader, on the JVM's own class
    # path (not copied per job); a class path the jobs' class-data-sharing archive was not built with, so
    # the small-job flags alone
    builder = builder.config("spark.driver.extraClassPath", os.pathsep.join([*s3a_jars(), *kafka_jars()]))
    builder = builder.config(DRIVER_JAVA_OPTIONS, " ".join(SMALL_JOB_FLAGS))
    for key, value in {**SPARK_TEST_CONF, "spark.sql.catalogImplementation": "hive",
                       "spark.hadoop.hive.metastore.uris": hive_metastore_server.uri,
                       "spark.sql.warehouse.dir": str(hive_metastore_server.warehouse)}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    hive_metastore_server.start()
    require_hudi(session)
    session.sparkContext.setLogLevel("ERROR")
    # py4j logs its shutdown at INFO from an exit hook, after pytest has closed the streams
    logging.getLogger("py4j").setLevel(logging.WARNING)
    yield session
    session.stop()


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Lake]:
    """A fresh server and bucket; this process's readers (pyarrow, hudi-rs) find it through the environment."""
    with S3Server() as server:
        lake = S3Lake(server, f"lake-{uuid.uuid4().hex[:8]}")
        server.create_bucket(lake.bucket)
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield lake
