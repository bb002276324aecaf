"""Fixtures shared by the integration and Airflow tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared_data import unzip_fixture


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    """A real ZooKeeper server on 127.0.0.1 for the whole session: `.url`, `.stop()`, `.start()`.

    Tests that stop it must start it again (the next test expects it running).
    """
    from hudi_ops.demo.zookeeper_server import ZookeeperServer, zookeeper_available

    if not zookeeper_available():
        pytest.fail("needs java and the ZooKeeper jars in /usr/share/java: install Debian's zookeeper package")
    server = ZookeeperServer(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    yield server
    server.cleanup()


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
