"""The YARN cluster the tests of cluster deploy mode submit to: Hadoop's ResourceManager and a NodeManager
from their main classes, on loopback, stopped with everything they started."""

from __future__ import annotations

import os

from local_platform.yarn_cluster import YarnCluster


def test_a_resourcemanager_and_a_nodemanager_serve_on_loopback_until_stopped(tmp_path):
    with YarnCluster(tmp_path / "yarn", memory_mb=4096) as yarn:
        metrics = yarn.api("/ws/v1/cluster/metrics")["clusterMetrics"]
        assert (metrics["activeNodes"], metrics["unhealthyNodes"], metrics["totalMB"]) == (1, 0, 4096)
        assert yarn.web_url.startswith("http://127.0.0.1:") and yarn.rm_address.startswith("127.0.0.1:")
        assert (tmp_path / "yarn" / "conf" / "yarn-site.xml").is_file()
        assert yarn.env()["HADOOP_CONF_DIR"] == str(yarn.conf_dir) and yarn.applications() == []
        daemons = [p.pid for p in yarn._processes]
    assert len(daemons) == 2 and not [pid for pid in daemons if _alive(pid)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
