"""The ResourceManager's web address, read from the yarn-site.xml spark-submit reads (the kill itself runs
against a real ResourceManager in tests/airflow/test_cluster_mode.py)."""

from __future__ import annotations

from hudi_ops.local.yarn_cluster import _write_site
from hudi_ops.spark.yarn_applications import resource_manager_url


def test_the_resource_managers_web_address_comes_from_yarn_site(tmp_path):
    _write_site(tmp_path / "yarn-site.xml", {"yarn.resourcemanager.webapp.address": "127.0.0.1:18088"})
    assert resource_manager_url({"HADOOP_CONF_DIR": str(tmp_path)}) == "http://127.0.0.1:18088"


def test_a_host_alone_means_yarns_default_port_and_https_only_its_https_address(tmp_path):
    _write_site(tmp_path / "yarn-site.xml", {"yarn.resourcemanager.hostname": "rm.local"})
    assert resource_manager_url({"YARN_CONF_DIR": str(tmp_path)}) == "http://rm.local:8088"
    _write_site(tmp_path / "yarn-site.xml", {"yarn.http.policy": "HTTPS_ONLY",
                                             "yarn.resourcemanager.webapp.https.address": "rm.local:8090"})
    assert resource_manager_url({"YARN_CONF_DIR": str(tmp_path)}) == "https://rm.local:8090"


def test_no_configuration_folder_means_no_address(tmp_path):
    assert resource_manager_url({}) is None
    assert resource_manager_url({"HADOOP_CONF_DIR": str(tmp_path)}) is None  # no yarn-site.xml in it
