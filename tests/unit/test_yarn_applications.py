"""The ResourceManager's web address, read from the yarn-site.xml spark-submit reads (the kill itself runs
against a real ResourceManager in tests/airflow/test_cluster_mode.py)."""

from __future__ import annotations

import pytest

from hudi_ops.spark.yarn_applications import kill_tagged, resource_managers
from local_platform.yarn_cluster import _write_site


def test_the_resource_managers_web_address_comes_from_yarn_site(tmp_path):
    _write_site(tmp_path / "yarn-site.xml", {"yarn.resourcemanager.webapp.address": "127.0.0.1:18088"})
    assert resource_managers({"HADOOP_CONF_DIR": str(tmp_path)}) == ["http://127.0.0.1:18088"]


def test_a_host_alone_a_reference_to_it_and_https_only_are_read_as_hadoop_reads_them(tmp_path):
    _write_site(tmp_path / "yarn-site.xml", {"yarn.resourcemanager.hostname": "rm.local"})
    assert resource_managers({"YARN_CONF_DIR": str(tmp_path)}) == ["http://rm.local:8088"]
    referring = "${yarn.resourcemanager.hostname}:18088"
    _write_site(tmp_path / "yarn-site.xml", {"yarn.resourcemanager.hostname": "rm.local",
                                             "yarn.resourcemanager.webapp.address": referring})
    assert resource_managers({"YARN_CONF_DIR": str(tmp_path)}) == ["http://rm.local:18088"]
    _write_site(tmp_path / "yarn-site.xml", {"yarn.http.policy": "HTTPS_ONLY",
                                             "yarn.resourcemanager.webapp.https.address": "rm.local:8090"})
    assert resource_managers({"YARN_CONF_DIR": str(tmp_path)}) == ["https://rm.local:8090"]


def test_with_high_availability_each_resource_manager_is_named(tmp_path):
    _write_site(tmp_path / "yarn-site.xml", {"yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
                                             "yarn.resourcemanager.hostname.rm1": "a.local",
                                             "yarn.resourcemanager.webapp.address.rm2": "b.local:18088"})
    assert resource_managers({"HADOOP_CONF_DIR": str(tmp_path)}) == ["http://a.local:8088", "http://b.local:18088"]


def test_no_configuration_folder_means_no_address_and_an_unreachable_one_an_error(tmp_path):
    assert resource_managers({}) == []
    assert resource_managers({"HADOOP_CONF_DIR": str(tmp_path)}) == []  # no yarn-site.xml in it
    _write_site(tmp_path / "yarn-site.xml", {"yarn.resourcemanager.webapp.address": "127.0.0.1:9"})  # discard port
    with pytest.raises(OSError):
        kill_tagged(resource_managers({"HADOOP_CONF_DIR": str(tmp_path)}), "hudi-ops-x", timeout_s=2)
