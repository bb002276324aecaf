"""hudi-ops installed as into an existing Airflow: a fresh venv, the package built from its sources (not this
checkout's editable install), and every direct dependency at the lowest version pyproject.toml allows
(uv's lowest-direct resolution: Airflow 3.2.0, the Spark provider 5.3.0, pyspark 3.5.2, ...). The
one-line DAG files parse there, the plugin loads from its entry point, and the connection type's form
is declared through the provider's info.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
#: what Airflow reads in the new venv, printed as one JSON line
CHECK = r'''
import json, sys
from airflow import plugins_manager
from airflow.dag_processing.dagbag import DagBag
from airflow.providers_manager import ProvidersManager
from airflow.timetables.base import Timetable
from importlib.metadata import version

bag = DagBag(dag_folder=sys.argv[1], include_examples=False)
plugins = {p["name"]: p for p in plugins_manager.get_plugin_info()}
manager = ProvidersManager()
print(json.dumps({
    "versions": {d: version(d) for d in ("apache-airflow", "apache-airflow-providers-apache-spark", "pyspark")},
    "dags": sorted(bag.dag_ids),
    "import_errors": {k.rsplit("/", 1)[-1]: v for k, v in bag.import_errors.items()},
    "timetable": type(getattr(bag.dags.get("hudi_backfill__trips"), "timetable", None)).__name__,
    "plugin": sorted(k for k, v in plugins.get("hudi_ops", {}).items() if v),
    "plugin_source": str(plugins.get("hudi_ops", {}).get("source")),
    "fields": sorted(k for k in manager.connection_form_widgets if k.startswith("extra__hudi_zookeeper__")),
    "behaviour": manager.field_behaviours.get("hudi_zookeeper"),
}))
'''


@pytest.fixture(scope="module")
def oldest(tmp_path_factory):
    root = tmp_path_factory.mktemp("install")
    source = root / "source"  # the package's sources alone, as an sdist holds them
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "hudi_ops", source / "hudi_ops", ignore=shutil.ignore_patterns("__pycache__"))
    uv = [str(Path(sys.executable).parent / "uv")]
    env = {**os.environ, "UV_CACHE_DIR": str(REPO / ".cache" / "uv")}  # later runs offline
    base_python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    subprocess.run([*uv, "venv", "-q", "--python", base_python, str(root / "venv")], check=True, env=env)
    python = root / "venv" / "bin" / "python"
    done = subprocess.run([*uv, "pip", "install", "-q", "--python", str(python), "--resolution", "lowest-direct",
                           str(source)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    # the suite's runner beside it, and this checkout's tests (not its package) after site-packages on the path
    harness = [line.split("  #")[0].strip().strip('",') for line in (REPO / "pyproject.toml").read_text().splitlines()
               if line.strip().startswith(('"pytest==', '"pytest-xdist==', '"pytest-timeout=='))]
    subprocess.run([*uv, "pip", "install", "-q", "--python", str(python), *harness], check=True, env=env)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "zz_hudi_ops_checkout_tests.pth").write_text(f"{REPO}\n")
    return root, python


def _clean_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "PYTHONPATH"))}
    env.update({"AIRFLOW_HOME": str(root / "airflow"), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__PLUGINS_FOLDER": str(root / "no-plugins")})
    return env


def test_with_the_oldest_airflow_it_supports_the_dags_parse_the_plugin_loads_and_the_form_is_declared(oldest):
    root, python = oldest
    dags = root / "airflow" / "dags"
    dags.mkdir(parents=True)
    for name in ("hudi_ops_tables.py", "hudi_ops_tables_refused.py"):  # what a user copies: a line or two each
        shutil.copy(REPO / "dags" / name, dags / name)
    (dags / "tables.yaml").write_text(yaml.safe_dump({"tables": {"trips": {
        "base_path": str(root / "trips"), "table_type": "MERGE_ON_READ", "record_key": "trip_id",
        "partition_field": "dt", "ordering_field": "ts",
        "ingest": {"source_path": str(root / "landing")}, "backfill": {"source_path": str(root / "history")},
        "services": {"compaction": {}}}}}))
    env = {**_clean_env(root), "AIRFLOW__CORE__DAGS_FOLDER": str(dags)}
    done = subprocess.run([str(python), "-c", CHECK, str(dags)], capture_output=True, text=True, env=env,
                          cwd=root)  # not this checkout: the installed package
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["versions"] == {"apache-airflow": "3.2.0", "apache-airflow-providers-apache-spark": "5.3.0",
                                "pyspark": "3.5.2"}
    assert seen["import_errors"] == {}, seen["import_errors"]
    assert seen["dags"] == ["hudi_backfill__trips", "hudi_ingest__trips", "hudi_restore__trips",
                            "hudi_services__trips"]
    assert seen["timetable"] == "DailyBackfillTimetable"  # from the plugin, which the DAG needs to parse
    assert {"fastapi_apps", "external_views", "timetables"} <= set(seen["plugin"])
    assert "hudi_ops.airflow.plugin" in (seen["plugin_source"] or ""), seen["plugin_source"]
    assert seen["fields"] == [f"extra__hudi_zookeeper__{f}" for f in
                              ("base_path", "connection_timeout_ms", "lock_key", "session_timeout_ms")]
    assert seen["behaviour"]["hidden_fields"] == ["schema", "login", "password"]


def test_the_unit_tests_pass_against_the_package_installed_at_the_oldest_versions(oldest):
    """pyarrow 16, fastavro 1.9, kazoo 2.9, pydantic 2.6 (or what Airflow 3.2.0 needs above them), pyspark
    3.5.2: the control plane and the jobs' specs, as installed (lineage needs the [openlineage] extra, the
    metrics' StatsD client the [metrics] one)."""
    root, python = oldest
    env = {**_clean_env(root), "HUDI_OPS_JARS_DIR": str(REPO / ".cache" / "jars")}  # the jars `make` fetched
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-m", "unit", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(REPO),
                           str(REPO / "tests" / "unit"), "--ignore", str(REPO / "tests" / "unit" / "test_lineage.py"),
                           "--ignore", str(REPO / "tests" / "unit" / "test_metrics.py")],
                          capture_output=True, text=True, env=env, cwd=root)
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]
    imported = subprocess.run([str(python), "-c", "import hudi_ops; print(hudi_ops.__file__)"], capture_output=True,
                              text=True, env=env, cwd=root).stdout
    assert imported.startswith(str(root / "venv")), imported  # the installed package, not the checkout's
