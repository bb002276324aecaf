"""ZooKeeper's server without Debian's package: its jars come from Maven into hudi-ops' jar cache (as make
fetches them), Debian's `zookeeper` stays an alternative, and without either the error names the fix."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from hudi_ops.errors import ConfigError
from hudi_ops.maven import CACHE_ENV
from local_platform import zookeeper_server
from local_platform.zookeeper_server import CLASSPATH_ENV, ZookeeperServer, maven_jars_dir, zookeeper_classpath


def test_a_server_from_the_maven_jars_serves_with_no_debian_jars(tmp_path, monkeypatch):
    monkeypatch.delenv(CLASSPATH_ENV, raising=False)
    # the lookup pointed away from Debian's folder: only the Maven cache can serve
    monkeypatch.setattr(zookeeper_server, "DEBIAN_JARS", tmp_path / "no-debian")
    assert zookeeper_classpath(tmp_path / "no-debian") == f"{maven_jars_dir()}/*"
    server = ZookeeperServer(tmp_path / "zk")
    try:
        server.start()
        client = KazooClient(hosts=server.url)
        client.start(timeout=10)
        try:
            client.create("/hudi-ops-probe", b"x")
            server.stop()
            server.start()  # the data dir survives a restart, as on a real ensemble
            client.retry(client.get, "/hudi-ops-probe")
            assert client.get("/hudi-ops-probe")[0] == b"x"
        finally:
            client.stop()
            client.close()
        assert f"zookeeper-{zookeeper_server.RELEASE}.jar" in server.log_tail(100_000)
    finally:
        server.cleanup()


def test_debian_jars_serve_when_nothing_was_fetched(tmp_path, monkeypatch):
    monkeypatch.delenv(CLASSPATH_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "empty-cache"))
    debian = tmp_path / "java"
    debian.mkdir()
    assert zookeeper_classpath(debian) is None
    (debian / "zookeeper-3.8.0.jar").touch()
    assert zookeeper_classpath(debian) == f"{debian}/*"
    monkeypatch.setenv(CLASSPATH_ENV, "/opt/zk/lib/*")
    assert zookeeper_classpath(debian) == "/opt/zk/lib/*"


def test_no_jars_at_all_names_the_fetch(tmp_path, monkeypatch):
    monkeypatch.delenv(CLASSPATH_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "empty-cache"))
    monkeypatch.setattr(zookeeper_server, "DEBIAN_JARS", tmp_path / "no-debian")
    with pytest.raises(ConfigError, match=r"python -m local_platform\.jars fetch zookeeper"):
        ZookeeperServer(tmp_path / "zk")
