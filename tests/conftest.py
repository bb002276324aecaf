"""Fixtures shared by the integration and Airflow tests."""

from __future__ import annotations

import pytest


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
