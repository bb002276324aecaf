"""hudi-ops installed as into an existing Airflow: a fresh venv, the wheel built from its sources (not this
checkout's editable install), at two ends of what pyproject.toml allows:

- the oldest: every direct dependency at its lowest version (uv's lowest-direct resolution: Airflow 3.2.0, the
  Spark provider 5.3.0, and the `jobs` extra's pyspark 3.5.2 in the same environment): the one-line DAG files
  parse, the plugin loads from its entry point, the connection type's form is declared through the provider's
  info, and the unit tests pass against the installed package;
- the newest: Airflow 3.3.2 and the newest Spark provider pip finds (its 6.x line, which brings pyspark-client,
  Spark 4), without the `jobs` extra.

In both, a table's ingest and backfill DAGs run end to end (`dag.test()`) in client mode with the jobs in an
interpreter of their own, named by the Spark connection's `pyspark-python` extra: a venv with what the jobs need
at its lowest versions and no hudi-ops (the task ships its package); hudi-rs reads the table against the rows.
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

from hudi_ops.spark.jobs_python import JOBS_REQUIREMENTS

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


#: the DAGs named after the DAG folder, run with dag.test() where the DAG files are (a backfill over two days); one
#: JSON line of what happened
RUN_DAGS = r'''
import json, sys
from importlib.metadata import PackageNotFoundError, version
from airflow.dag_processing.dagbag import DagBag
from airflow.utils import db

db.initdb()
bag = DagBag(dag_folder=sys.argv[1])
states = [bag.get_dag(dag_id).test(run_conf={"start": "2026-01-01", "end": "2026-01-02"}
                                   if dag_id.startswith("hudi_backfill__") else None).state for dag_id in sys.argv[2:]]
def installed(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return None
durable = {getattr(t, "durable", None) for d in bag.dags.values() for t in d.tasks if hasattr(t, "job_spec")}
print(json.dumps({"states": states, "durable": sorted(map(str, durable)),
                  "errors": {k: v for k, v in bag.import_errors.items()},
                  "versions": {d: installed(d) for d in ("apache-airflow", "apache-airflow-providers-apache-spark",
                                                         "pyspark", "pyspark-client")}}))
'''


#: Airflow installs with its constraints file, which pins its API server's stack; without it uv takes the newest,
#: and fastapi 0.163.2 with cadwyn 9.0.0 cannot build Airflow 3.2.0's execution API that dag.test() runs
#: ("PydanticUserError: Model 'TITerminalStatePayload' needs a discriminator field"): the suite's versions of those
API_STACK = ("fastapi", "cadwyn")


def _install(root: Path, *requirements: str, lowest: bool = False, package: bool = True) -> Path:
    """A fresh venv under `root` with `requirements`, where `{wheel}` is hudi-ops' wheel built from its sources
    alone (as an sdist holds them) and `{source}` those sources (uv's lowest-direct resolution takes a source
    folder's dependencies as direct ones, a wheel's as transitive); its python. `package`: build them."""
    uv = [str(Path(sys.executable).parent / "uv")]
    env = {**os.environ, "UV_CACHE_DIR": str(REPO / ".cache" / "uv")}  # later runs offline
    source = wheel = None
    if package:
        source = root / "source"
        source.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy(REPO / name, source / name)
        shutil.copytree(REPO / "hudi_ops", source / "hudi_ops", ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([*uv, "build", "-q", "--wheel", "--out-dir", str(root / "dist"), str(source)], check=True,
                       env=env)
        wheel = next((root / "dist").glob("hudi_ops-*.whl"))
    base_python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    subprocess.run([*uv, "venv", "-q", "--python", base_python, str(root / "venv")], check=True, env=env)
    python = root / "venv" / "bin" / "python"
    pins = root / "api-stack.txt"
    pins.write_text("".join(line + "\n" for line in (REPO / "constraints.txt").read_text().splitlines()
                            if line.split("==")[0] in API_STACK))
    done = subprocess.run([*uv, "pip", "install", "-q", "--python", str(python), "-c", str(pins),
                           *(["--resolution", "lowest-direct"] if lowest else []),
                           *(r.format(wheel=wheel, source=source) for r in requirements)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return python


@pytest.fixture(scope="module")
def jobs_only(tmp_path_factory) -> Path:
    """The jobs' interpreter of both ends: what hudi_ops.spark.jobs_python tells a user to install, at its lowest
    versions (pyspark 3.5.2, pyarrow 16, fastavro 1.9, kazoo 2.9), and no hudi-ops: the task ships its own."""
    return _install(tmp_path_factory.mktemp("jobs-only"), *JOBS_REQUIREMENTS, lowest=True, package=False)


@pytest.fixture(scope="module")
def oldest(tmp_path_factory):
    root = tmp_path_factory.mktemp("install")
    python = _install(root, "{source}[jobs]", lowest=True)
    # the suite's runner beside it, and this checkout's tests (not its package) after site-packages on the path
    harness = [line.split("  #")[0].strip().strip('",') for line in (REPO / "pyproject.toml").read_text().splitlines()
               if line.strip().startswith(('"pytest==', '"pytest-xdist==', '"pytest-timeout=='))]
    env = {**os.environ, "UV_CACHE_DIR": str(REPO / ".cache" / "uv")}
    subprocess.run([str(Path(sys.executable).parent / "uv"), "pip", "install", "-q", "--python", str(python),
                    *harness], check=True, env=env)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "zz_hudi_ops_checkout_tests.pth").write_text(f"{REPO}\n")
    return root, python


@pytest.fixture(scope="module")
def newest(tmp_path_factory):
    root = tmp_path_factory.mktemp("install-newest")
    return root, _install(root, "{wheel}", "apache-airflow==3.3.2", "apache-airflow-providers-apache-spark")


def _clean_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "PYTHONPATH"))}
    env.update({"AIRFLOW_HOME": str(root / "airflow"), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__PLUGINS_FOLDER": str(root / "no-plugins")})
    return env


def _run_env(root: Path, dags: Path, database: Path, zookeeper, lock_base_path: str, **conns: dict) -> dict[str, str]:
    """Where a DAG run in the venv of `root` finds its DAGs, database, jars, connections (`conns`: Spark's, by id) and
    the table's ZooKeeper lock; no jobs' Python but the one a connection names."""
    host, port = zookeeper.url.rsplit(":", 1)
    env = {**_clean_env(root), "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
           "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{database}",
           "HUDI_OPS_JARS_DIR": str(REPO / ".cache" / "jars"),  # the jars `make` fetched
           "AIRFLOW_CONN_HUDI_ZOOKEEPER_DEFAULT": json.dumps({"conn_type": "hudi_zookeeper", "host": host,
                                                              "port": int(port),
                                                              "extra": {"base_path": lock_base_path}}),
           **{f"AIRFLOW_CONN_{conn_id.upper()}": json.dumps({"conn_type": "spark", **conn})
              for conn_id, conn in conns.items()}}
    for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME"):
        env.pop(name, None)
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
                                "pyspark": "3.5.2"}  # the `jobs` extra's, at its lowest
    assert seen["import_errors"] == {}, seen["import_errors"]
    assert seen["dags"] == ["hudi_backfill__trips", "hudi_ingest__trips", "hudi_restore__trips",
                            "hudi_services__trips"]
    assert seen["timetable"] == "DailyBackfillTimetable"  # from the plugin, which the DAG needs to parse
    assert {"fastapi_apps", "external_views", "timetables"} <= set(seen["plugin"])
    assert "hudi_ops.airflow.ui.plugin" in (seen["plugin_source"] or ""), seen["plugin_source"]
    assert seen["fields"] == [f"extra__hudi_zookeeper__{f}" for f in
                              ("base_path", "connection_timeout_ms", "lock_key", "session_timeout_ms")]
    assert seen["behaviour"]["hidden_fields"] == ["schema", "login", "password"]


def test_the_unit_tests_pass_against_the_package_installed_at_the_oldest_versions(oldest):
    """pyarrow 16, fastavro 1.9, kazoo 2.9, pydantic 2.12 (or what Airflow 3.2.0 needs above them), pyspark
    3.5.2: the control plane and the jobs' specs, as installed (lineage needs the [openlineage] extra, the
    metrics' StatsD client the [metrics] one, the Kubernetes API's client the [kubernetes] one)."""
    root, python = oldest
    env = {**_clean_env(root), "HUDI_OPS_JARS_DIR": str(REPO / ".cache" / "jars")}  # the jars `make` fetched
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-m", "unit", "-p", "no:cacheprovider",
                           "--import-mode=importlib", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(REPO),
                           str(REPO / "tests" / "unit"), "--ignore", str(REPO / "tests" / "unit" / "test_lineage.py"),
                           "--ignore", str(REPO / "tests" / "unit" / "test_metrics.py"),
                           "--ignore", str(REPO / "tests" / "unit" / "test_kubernetes_pods.py")],
                          capture_output=True, text=True, env=env, cwd=root)
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]
    imported = subprocess.run([str(python), "-c", "import hudi_ops; print(hudi_ops.__file__)"], capture_output=True,
                              text=True, env=env, cwd=root).stdout
    assert imported.startswith(str(root / "venv")), imported  # the installed package, not the checkout's


@pytest.mark.spark  # two spark-submits, from the installed operators, with a jobs-only venv as the jobs' Python
@pytest.mark.parametrize("end", ["oldest", "newest"])
def test_an_ingest_and_a_backfill_dag_run_end_to_end_with_the_jobs_in_an_interpreter_of_their_own(
        end, request, jobs_only, zookeeper):
    import hudi
    import pyarrow as pa
    import pyarrow.parquet as pq

    root, python = request.getfixturevalue(end)
    dags = root / "airflow" / "dags"
    dags.mkdir(parents=True, exist_ok=True)
    for name in ("hudi_ops_tables.py", "hudi_ops_tables_refused.py"):
        shutil.copy(REPO / "dags" / name, dags / name)
    table, landing, history = root / "trips-run", root / "landing-run", root / "history-run"
    landing.mkdir()
    pq.write_table(pa.table({"trip_id": [1, 2], "ts": [5, 5], "dt": ["2026-01-01", "2026-01-02"]}),
                   landing / "a.parquet")
    for day, ids in (("2026-01-01", [2, 3]), ("2026-01-02", [4])):
        (history / f"dt={day}").mkdir(parents=True)
        pq.write_table(pa.table({"trip_id": ids, "ts": [1] * len(ids)}), history / f"dt={day}" / "part.parquet")
    (dags / "tables.yaml").write_text(yaml.safe_dump({"tables": {"trips": {
        "base_path": str(table), "table_type": "COPY_ON_WRITE", "record_key": "trip_id",
        "partition_field": "dt", "ordering_field": "ts",
        "ingest": {"source_path": str(landing)}, "backfill": {"source_path": str(history)}}}}))
    env = _run_env(root, dags, root / "airflow" / "run.db", zookeeper, f"/{end}",
                   spark_default={"host": "local[1]", "extra": {"pyspark-python": str(jobs_only)}})
    done = subprocess.run([str(python), "-c", RUN_DAGS, str(dags), "hudi_ingest__trips", "hudi_backfill__trips"],
                          capture_output=True, text=True, env=env, cwd=root)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["errors"] == {} and seen["states"] == ["success", "success"], done.stdout[-6000:]
    if end == "newest":  # Airflow's side beside the provider's 6.x line and its Spark 4 client, no PySpark 3.5
        assert seen["versions"]["apache-airflow"] == "3.3.2"
        assert seen["versions"]["apache-airflow-providers-apache-spark"].startswith("6.")
        assert seen["versions"]["pyspark-client"].startswith("4.") and seen["versions"]["pyspark"] is None
        # the provider's own durable execution off in hudi-ops' operators (it refuses their YARN cluster mode)
        assert seen["durable"] == ["False"]
    else:
        assert seen["durable"] == ["None"]  # 5.x has none
    rows = pa.Table.from_batches(hudi.HudiTable(str(table)).read()).select(["trip_id", "ts", "dt"]).to_pylist()
    # key 2 came in two days, one from each DAG: two records (Hudi's default index is per partition)
    assert sorted((r["trip_id"], r["ts"], r["dt"]) for r in rows) == [
        (1, 5, "2026-01-01"), (2, 1, "2026-01-01"), (2, 5, "2026-01-02"), (3, 1, "2026-01-01"), (4, 1, "2026-01-02")]


@pytest.mark.spark  # a ResourceManager and a NodeManager on loopback, and a spark-submit in YARN cluster mode
@pytest.mark.slow
def test_beside_the_providers_6x_line_a_backfill_runs_in_yarn_cluster_mode_followed_through_the_resource_manager(
        newest, jobs_only, zookeeper):
    """Airflow 3.3 users get the provider's 6.x line, whose SparkSubmitHook hudi-ops' YARN cluster mode submits with
    (its own durable execution off): spark-submit returns once YARN accepted the job and the task follows it."""
    import hudi
    import pyarrow as pa
    import pyarrow.parquet as pq

    from local_platform.yarn_cluster import YarnCluster

    root, python = newest
    home = root / "yarn"
    dags, history, table = home / "dags", home / "history", home / "trips"
    dags.mkdir(parents=True)
    shutil.copy(REPO / "dags" / "hudi_ops_tables.py", dags)
    for day, ids in (("2026-01-01", [1, 2]), ("2026-01-02", [3])):
        (history / f"dt={day}").mkdir(parents=True)
        pq.write_table(pa.table({"trip_id": ids, "ts": [1] * len(ids)}), history / f"dt={day}" / "part.parquet")
    jobs_spark = subprocess.run([str(jobs_only), "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
                                check=True, capture_output=True, text=True).stdout.strip()
    with YarnCluster(home / "cluster", memory_mb=4096) as yarn:
        # the nodes run the jobs' interpreter, with its Spark's jars (3.5.2: the jobs' venv is at its lowest)
        spark_conf = {**yarn.spark_conf(str(jobs_only)), "spark.yarn.jars": f"local:{jobs_spark}/jars/*"}
        (dags / "tables.yaml").write_text(yaml.safe_dump({"tables": {"trips": {
            "base_path": str(table), "table_type": "COPY_ON_WRITE", "record_key": "trip_id", "partition_field": "dt",
            "ordering_field": "ts", "spark_conn_id": "spark_yarn", "spark_conf": spark_conf,
            "backfill": {"source_path": str(history)}}}}))
        env = {**_run_env(root, dags, home / "run.db", zookeeper, "/yarn",
                          spark_yarn={"host": "yarn", "extra": {"deploy-mode": "cluster"}}), **yarn.env(),
               # the worker's spark-submit: the jobs' Spark (Airflow's environment has the provider's Spark 4 client)
               "PATH": f"{Path(jobs_only).parent}{os.pathsep}{os.environ['PATH']}"}
        done = subprocess.run([str(python), "-c", RUN_DAGS, str(dags), "hudi_backfill__trips"], capture_output=True,
                              text=True, env=env, cwd=root)
        log = done.stdout + done.stderr
        assert done.returncode == 0, log[-6000:]
        seen = json.loads(done.stdout.strip().splitlines()[-1])
        assert seen["errors"] == {} and seen["states"] == ["success"], log[-6000:] + yarn.log_tail()
        assert seen["versions"]["apache-airflow-providers-apache-spark"].startswith("6."), seen
        (app,) = yarn.applications()  # one application for the run's one task, which it followed to its end
        assert (app["name"], app["finalStatus"]) == ("hudi-ops-backfill-trips", "SUCCEEDED"), app
        assert f"following {app['id']} through" in log, log[-6000:]
    rows = pa.Table.from_batches(hudi.HudiTable(str(table)).read()).select(["trip_id", "ts", "dt"]).to_pylist()
    assert sorted((r["trip_id"], r["ts"], r["dt"]) for r in rows) == [
        (1, 1, "2026-01-01"), (2, 1, "2026-01-01"), (3, 1, "2026-01-02")]
