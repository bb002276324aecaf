"""The hudi-ops provider: hook, operators and their spark-submit, with real Airflow, Spark and ZooKeeper."""

from __future__ import annotations

import json
import shutil
import threading
import time
from importlib.metadata import entry_points
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ops.errors import ConfigError
from hudi_ops.options.properties_file import parse_props_file
from tests.airflow.conftest import SPARK_CONF, dag_in_folder

pytestmark = pytest.mark.spark  # spark-submit jobs of its own

DAG_ID = "hudi_ops_test_ingest"
DAG_FILE = f'''
import datetime as dt

from airflow.sdk import DAG, Param

from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator

with DAG("{DAG_ID}", schedule=None,
         params={{"base_path": Param(""), "source_path": Param(""), "driver_memory": Param("1g")}}):
    HudiIngestOperator(
        task_id="ingest", base_path="{{{{ params.base_path }}}}", source_path="{{{{ params.source_path }}}}",
        table_name="trips", record_key_field="id", partition_path_field="city", ordering_field="ts",
        conf={{**{SPARK_CONF!r}, "spark.driver.memory": "{{{{ params.driver_memory }}}}"}},
        retry_delay=dt.timedelta(seconds=1), max_retry_delay=dt.timedelta(seconds=2),  # retries, but quick ones
    )
'''


def _trips(ids, city="sf") -> pa.Table:
    return pa.table({"id": ids, "ts": [1] * len(ids), "city": [city] * len(ids), "fare": [1.5] * len(ids)})


def test_the_package_registers_its_connection_type_with_its_form_and_its_hooks_operators_sensors_and_trigger():
    from airflow.providers_manager import ProvidersManager

    (ep,) = [e for e in entry_points(group="apache_airflow_provider") if e.value.startswith("hudi_ops.")]
    info = ep.load()()
    kinds = ("hooks", "operators", "sensors", "triggers")
    assert {m for kind in kinds for entry in info[kind] for m in entry["python-modules"]} \
        == {"hudi_ops.airflow.hooks.zookeeper_lock", "hudi_ops.airflow.operators.spark_jobs",
            "hudi_ops.airflow.operators.table_services", "hudi_ops.airflow.operators.writer_pause",
            "hudi_ops.airflow.sensors.commit", "hudi_ops.airflow.triggers.yarn_application"}
    # the form as Airflow 3.2+ reads it from the provider's info, without the hook's deprecated methods
    from hudi_ops.airflow.hooks.zookeeper_lock import ZookeeperLockHook

    manager = ProvidersManager()
    assert "hudi-ops" in manager.providers
    behaviour = manager.field_behaviours["hudi_zookeeper"]
    assert behaviour["hidden_fields"] == ["schema", "login", "password"]
    assert behaviour["relabeling"]["host"] == "ZooKeeper host(s), comma separated"
    fields = {k.removeprefix("extra__hudi_zookeeper__"): w.field for k, w in manager.connection_form_widgets.items()
              if k.startswith("extra__hudi_zookeeper__")}
    assert set(fields) == {"base_path", "lock_key", "session_timeout_ms", "connection_timeout_ms"}
    assert (fields["base_path"]["schema"]["title"], fields["base_path"]["value"]) == ("Lock base path", "/hudi/locks")
    assert "get_ui_field_behaviour" not in vars(ZookeeperLockHook)  # deprecated since Airflow 3.2


def test_the_zookeeper_connection_becomes_the_lock_options_of_every_pipeline_of_the_table(monkeypatch):
    from hudi_ops.airflow.hooks.zookeeper_lock import ZookeeperLockHook
    from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator

    monkeypatch.setenv("AIRFLOW_CONN_HUDI_ZOOKEEPER_DEFAULT", json.dumps(
        {"conn_type": "hudi_zookeeper", "host": "zk1,zk2:2182", "port": 2181, "extra": {"lock_key": "trips-lock"}}
    ))
    def job_options(table_options):  # what the table's ingest task runs with
        return HudiIngestOperator(task_id="ingest", base_path="/t", table_name="trips", record_key_field="id",
                                  source_path="/in", hoodie_conf=table_options).job_options()

    options = job_options({"hoodie.write.lock.zookeeper.url": "elsewhere", "hoodie.index.type": "BLOOM"})
    assert options["hoodie.write.lock.zookeeper.url"] == "zk1:2181,zk2:2182"
    assert options["hoodie.write.lock.provider"].endswith("ZookeeperBasedLockProvider")
    assert (options["hoodie.write.lock.zookeeper.base_path"], options["hoodie.write.lock.zookeeper.lock_key"]) == \
        ("/hudi/locks", "trips-lock")
    assert options["hoodie.index.type"] == "BLOOM"
    # ingestion first, unless the table chooses otherwise
    assert options["hoodie.clustering.updates.strategy"].endswith(".SparkAllowUpdateStrategy")
    assert options["hoodie.write.lock.conflict.resolution.strategy"].endswith(".PreferWriterConflictResolutionStrategy")
    reject = "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy"
    chosen = job_options({"hoodie.clustering.updates.strategy": reject})
    assert chosen["hoodie.clustering.updates.strategy"] == reject
    # a bucket index keeps the conflict check by bucket that Hudi infers for it
    bucket = job_options({"hoodie.index.type": "BUCKET"})
    assert "hoodie.write.lock.conflict.resolution.strategy" not in bucket
    # a table may choose Hudi's other multi-writer mode, which takes the same lock
    nbcc = {"hoodie.index.type": "BUCKET", "hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL"}
    non_blocking = ZookeeperLockHook("trips", table_options=nbcc).write_options()
    assert non_blocking["hoodie.write.concurrency.mode"] == "NON_BLOCKING_CONCURRENCY_CONTROL"
    assert non_blocking["hoodie.write.lock.provider"].endswith("ZookeeperBasedLockProvider")
    single = {"hoodie.write.concurrency.mode": "SINGLE_WRITER"}
    with pytest.raises(ConfigError, match="use OPTIMISTIC_CONCURRENCY_CONTROL"):
        ZookeeperLockHook("trips", table_options=single).write_options()
    assert ZookeeperLockHook("trips", zookeeper_conn_id=None).write_options() == {}


def test_a_backfill_operator_submits_the_hudi_ops_application_with_hudis_jars_and_its_rendered_window():
    from hudi_ops.airflow.operators.spark_jobs import HudiBackfillOperator
    from hudi_ops.spark.driver_jvm import DRIVER_JAVA_OPTIONS, driver_java_options
    from hudi_ops.spark.hudi_bundle import hudi_jars
    from hudi_ops.spark.launch import APPLICATION, HUDI_SESSION_CONF

    op = HudiBackfillOperator(
        task_id="backfill", base_path="/data/trips", table_name="trips", record_key_field="id",
        source_path="/in", start="{{ params.start }}", end="{{ params.end }}", zookeeper_conn_id=None,
        conf={"spark.ui.enabled": "false"}, hoodie_conf={"hoodie.upsert.shuffle.parallelism": "3"},
    )
    op.render_template_fields({"params": {"start": "2026-01-01", "end": "2026-01-31"}, "run_id": "manual__1"})
    op.prepare({})
    cmd = op._get_hook()._build_spark_submit_command(op.application)
    assert cmd[:3] == ["spark-submit", "--master", "local[1]"] and APPLICATION in cmd
    assert cmd[cmd.index("--jars") + 1] == ",".join(hudi_jars())
    confs = {cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--conf"}
    assert {f"{k}={v}" for k, v in HUDI_SESSION_CONF.items()} | {"spark.ui.enabled=false"} <= confs
    assert f"{DRIVER_JAVA_OPTIONS}={driver_java_options()}" in confs  # the small-job driver JVM
    own = HudiBackfillOperator(task_id="own", base_path="/data/trips", table_name="trips", record_key_field="id",
                               source_path="/in", start="2026-01-01", end="2026-01-01", zookeeper_conn_id=None,
                               conf={DRIVER_JAVA_OPTIONS: "-Xss4m"})
    own.prepare({})
    assert own.conf[DRIVER_JAVA_OPTIONS] == "-Xss4m"  # a DAG's own choice wins
    shutil.rmtree(own._folder)
    assert cmd[cmd.index(APPLICATION) + 1:][:1] == ["backfill"]
    assert cmd[cmd.index("--start") + 1] == "2026-01-01" and cmd[cmd.index("--end") + 1] == "2026-01-31"
    # the hoodie.* options travel in a properties file only the task's user can read, off the command line
    assert "--hoodie-conf" not in cmd and not any(arg.startswith("hoodie.") for arg in cmd)
    props = Path(cmd[cmd.index("--props") + 1])
    assert parse_props_file(props.read_text())["hoodie.upsert.shuffle.parallelism"] == "3"
    assert props.stat().st_mode & 0o077 == 0 and props.parent.stat().st_mode & 0o077 == 0
    shutil.rmtree(props.parent)  # execute() removes it when the job ends


@pytest.fixture
def ingest_dag(airflow_db):
    with dag_in_folder(DAG_ID, DAG_FILE) as dag:
        yield dag


def test_the_tests_and_benchmarks_launch_a_job_as_the_operator_does():
    """spark_submit_command (tests, benchmarks) and the operator take one recipe: the same jars and settings,
    in the same order, for a table on S3 too."""
    from hudi_ops.airflow.operators.spark_jobs import FoundWork, HudiIngestOperator
    from hudi_ops.s3_settings import S3Settings
    from hudi_ops.spark.launch import APPLICATION, spark_submit_command

    s3 = S3Settings(endpoint="http://127.0.0.1:9000", region="us-east-1", path_style=True)
    op = HudiIngestOperator(task_id="ingest", base_path="s3a://lake/trips", table_name="trips", record_key_field="id",
                            source_path="s3a://lake/landing", zookeeper_conn_id=None,
                            conf={"spark.ui.enabled": "false"})
    op.__dict__["s3"] = s3  # the connection's S3, as the operator reads it from aws_default
    op.find_work = lambda context, spec: FoundWork()  # no S3 server here: the launch is what is compared
    op.prepare({})
    shutil.rmtree(op._folder)
    operator = op._get_hook()._build_spark_submit_command(op.application)
    ours = spark_submit_command(op.application_args, master="local[1]", conf={"spark.ui.enabled": "false"}, s3=s3)

    def launch(cmd: list[str]) -> tuple[str, list[str]]:
        return cmd[cmd.index("--jars") + 1], [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--conf"]

    assert launch(operator) == launch(ours)
    assert "hadoop-aws-3.3.4.jar" in launch(ours)[0] and "spark.hadoop.fs.s3a.path.style.access=true" in launch(ours)[1]
    assert operator[-len(op.application_args) - 1:] == ours[-len(op.application_args) - 1:] == [
        APPLICATION, *op.application_args]


def _task(run, task_id="ingest"):
    (ti,) = [t for t in run.get_task_instances() if t.task_id == task_id]
    return ti


def test_an_ingest_task_writes_the_table_under_the_zookeeper_lock_and_records_an_asset_event(
    ingest_dag, zookeeper_connection, zookeeper, tmp_path
):
    source, base = tmp_path / "in", tmp_path / "trips"
    source.mkdir()
    pq.write_table(_trips([1, 2, 3]), source / "a.parquet")
    run = ingest_dag.test(run_conf={"base_path": str(base), "source_path": str(source)})
    assert run.state == "success"
    rows = pa.Table.from_batches(hudi.HudiTable(str(base)).read()).select(["id", "city"]).to_pylist()
    assert sorted(r["id"] for r in rows) == [1, 2, 3]

    from airflow.models.asset import AssetEvent
    from airflow.utils.session import create_session

    with create_session() as session:
        events = [(e.asset.uri, e.extra) for e in session.query(AssetEvent).all() if e.source_run_id == run.run_id]
    assert len(events) == 1 and events[0][0] == base.resolve().as_uri() and events[0][1]["rows"] == 3


def test_an_idle_ingest_tick_is_skipped_without_starting_spark(ingest_dag, zookeeper_connection, tmp_path, capfd):
    source, base = tmp_path / "in", tmp_path / "trips"
    source.mkdir()
    pq.write_table(_trips([1, 2]), source / "a.parquet")
    assert ingest_dag.test(run_conf={"base_path": str(base), "source_path": str(source)}).state == "success"
    capfd.readouterr()
    # a Spark setting spark-submit refuses at once: a task that started spark-submit would fail
    broken = {"base_path": str(base), "source_path": str(source), "driver_memory": "lots"}
    idle = ingest_dag.test(run_conf=broken)
    assert idle.state == "success" and _task(idle).state == "skipped"
    log = "".join(capfd.readouterr())
    assert "nothing to ingest: no new source files" in log and "Spark-Submit cmd" not in log

    pq.write_table(_trips([3]), source / "b.parquet")  # now there is work, and the broken setting shows
    busy = ingest_dag.test(run_conf=broken)
    assert busy.state == "failed" and "Spark-Submit cmd" in "".join(capfd.readouterr())


def test_bad_source_data_fails_the_task_at_once_without_retries(ingest_dag, zookeeper_connection, tmp_path):
    source, base = tmp_path / "in", tmp_path / "trips"
    source.mkdir()
    pq.write_table(pa.table({"ts": [1], "city": ["sf"]}), source / "nokey.parquet")
    run = ingest_dag.test(run_conf={"base_path": str(base), "source_path": str(source)})
    ti = _task(run)
    assert run.state == "failed" and ti.state == "failed" and ti.try_number == 1  # retries=3, none used
    assert not (base / ".hoodie" / "timeline").exists() or not any((base / ".hoodie" / "timeline").glob("*.commit"))


def test_killing_the_task_ends_spark_submit_and_its_python_driver(zookeeper_connection, zookeeper, tmp_path):
    """The driver waits in line for the table's ZooKeeper lock, busy in Python: the provider's on_kill
    ends spark-submit's JVM only, and the driver must not outlive it (it would keep its place in the
    lock queue until its wait ran out)."""
    import psutil
    from kazoo.client import KazooClient

    op, holder = _ingest_behind_a_held_lock(tmp_path, "killed", lock_wait_ms=600_000)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            op.execute({"outlet_events": {}})
        except BaseException as e:  # the killed job's failure
            failure.append(e)

    worker = threading.Thread(target=run)
    raw = KazooClient(hosts=zookeeper.url)
    raw.start()
    before = set(psutil.Process().children(recursive=True))  # ZooKeeper's server, say
    try:
        worker.start()
        deadline = time.monotonic() + 120
        while len(raw.get_children(holder.lock_path)) < 2:  # the job's driver waits behind us
            assert time.monotonic() < deadline and worker.is_alive(), "the job never reached the lock"
            time.sleep(0.1)
        job = set(psutil.Process().children(recursive=True)) - before  # spark-submit's JVM, its driver
        assert any("hudi_ops/spark/__main__.py" in " ".join(_cmdline(p)) and "java" not in p.name() for p in job)
        op.on_kill()
        worker.join(timeout=60)
        assert failure and not worker.is_alive()
        _, alive = psutil.wait_procs(job, timeout=30)
        alive = [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
        assert alive == [], "processes of the spark-submit outlived on_kill"
        deadline = time.monotonic() + 60  # its place in line goes with it (at the latest, its session's timeout)
        while len(raw.get_children(holder.lock_path)) > 1:
            assert time.monotonic() < deadline, "the killed driver's lock node outlived its session timeout"
            time.sleep(0.2)
    finally:
        raw.stop()
        raw.close()
        holder.close()


@pytest.mark.parametrize(("code", "error", "retried", "said"), [
    (2, "InvalidInputError", False, "bad input (exit 2), not retried: "),
    (3, "WriteConflictError", True, "write conflict (exit 3), retried with backoff: "),
    (3, "ClusteringUpdateConflictError", True, "write conflict (exit 3), retried with backoff: "),
    (3, "ConcurrentJobError", True, "concurrent job (exit 3), retried with backoff: "),
    (4, "LockTimeoutError", True, "lock timeout (exit 4), retried with backoff: "),
])
def test_the_jobs_reported_exit_code_decides_whether_airflow_retries(code, error, retried, said):
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    from hudi_ops.airflow.operators.spark_jobs import HudiSparkJobOperator
    from hudi_ops.job_specs import JobFailure

    raised = AirflowException("Cannot execute: spark-submit ... Error code is: 1.")
    mapped = HudiSparkJobOperator._failure(raised, JobFailure("ingest", code, error, "the reason"))
    assert str(mapped) == said + "the reason"
    assert isinstance(mapped, AirflowFailException) is not retried


def test_a_job_that_reported_nothing_or_failed_otherwise_fails_as_the_provider_says():
    from airflow.sdk.exceptions import AirflowException

    from hudi_ops.airflow.operators.spark_jobs import HudiSparkJobOperator
    from hudi_ops.job_specs import JobFailure

    raised = AirflowException("Cannot execute: spark-submit ... Error code is: 137.")
    assert HudiSparkJobOperator._failure(raised, None) is raised  # killed: Airflow's retries decide
    assert HudiSparkJobOperator._failure(raised, JobFailure("ingest", 1, "HudiOpsError", "boom")) is raised


def test_a_lock_timeout_is_a_retryable_failure(zookeeper_connection, tmp_path):
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    op, holder = _ingest_behind_a_held_lock(tmp_path, "timeout", lock_wait_ms=2000)
    try:
        with pytest.raises(AirflowException, match=r"lock timeout \(exit 4\), retried with backoff") as caught:
            op.execute({"outlet_events": {}})
    finally:
        holder.close()
    assert not isinstance(caught.value, AirflowFailException)
    assert op.retries == 3 and op.retry_exponential_backoff


def _cmdline(process) -> list[str]:
    """A process's command line; none for one that has ended since it was listed (spark-submit's launcher
    exits once it has started the JVM)."""
    import psutil

    try:
        return process.cmdline()
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return []


def _ingest_behind_a_held_lock(tmp_path: Path, table: str, *, lock_wait_ms: int):
    """An ingest task of a one-row source, and a holder that has taken the table's ZooKeeper lock
    (each test its own table, hence its own lock: a killed job's queued lock node may outlive it a while)."""
    from hudi_ops.airflow.hooks.zookeeper_lock import ZookeeperLockHook
    from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator
    from hudi_ops.locks.zookeeper import ZookeeperBasedLockProvider
    from hudi_ops.options.config_property import HoodieConfig

    source = tmp_path / "in"
    source.mkdir()
    pq.write_table(_trips([1]), source / "a.parquet")
    op = HudiIngestOperator(task_id="ingest", base_path=str(tmp_path / "t"), table_name=table, record_key_field="id",
                            source_path=str(source), conf=SPARK_CONF,
                            hoodie_conf={"hoodie.write.lock.wait_time_ms": str(lock_wait_ms)})
    holder = ZookeeperBasedLockProvider.from_config(HoodieConfig(ZookeeperLockHook(table).write_options()),
                                                    table_name=table)
    holder.acquire(10)
    return op, holder


S3_DAG_ID = "hudi_ops_test_ingest_s3"
S3_DAG_FILE = f'''
from airflow.sdk import DAG, Param

from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator

with DAG("{S3_DAG_ID}", schedule=None, params={{"base_path": Param(""), "source_path": Param("")}}):
    HudiIngestOperator(
        task_id="ingest", base_path="{{{{ params.base_path }}}}", source_path="{{{{ params.source_path }}}}",
        table_name="trips", record_key_field="id", partition_path_field="city", ordering_field="ts",
        aws_conn_id="lake", conf={SPARK_CONF!r}, retries=0,
    )
'''


def test_an_ingest_into_an_s3_table_takes_its_store_from_an_aws_connection_and_never_shows_its_keys(
    airflow_db, zookeeper_connection, s3, tmp_path, capfd, monkeypatch
):
    """The task's process has no AWS keys of its own: the control plane's check, spark-submit and hudi-rs
    reach the table with the connection's alone, and no key shows in the task's log or its result."""
    server = s3.server
    monkeypatch.setenv("AIRFLOW_CONN_LAKE", json.dumps(
        {"conn_type": "aws", "login": server.access_key, "password": server.secret_key,
         "extra": {"endpoint_url": server.endpoint, "region_name": "us-east-1",
                   "config_kwargs": {"s3": {"addressing_style": "path"}}}}))
    for key in server.env():  # the `s3` fixture's environment is this test's readers', not the task's
        monkeypatch.delenv(key)
    source, base = tmp_path / "in", s3.uri("trips")
    source.mkdir()
    pq.write_table(_trips([1, 2, 3]), source / "a.parquet")
    with dag_in_folder(S3_DAG_ID, S3_DAG_FILE) as dag:
        capfd.readouterr()
        run = dag.test(run_conf={"base_path": base, "source_path": str(source)})
        log = "".join(capfd.readouterr())
        assert run.state == "success", log[-3000:]
        result = _task(run).xcom_pull(task_ids="ingest")
        assert result["rows"] == 3 and "Spark-Submit cmd" in log
        idle = dag.test(run_conf={"base_path": base, "source_path": str(source)})  # the check read the table
        assert _task(idle).state == "skipped"
        log += "".join(capfd.readouterr())
    for secret in (server.secret_key, server.access_key):
        assert secret not in log and secret not in json.dumps(result)
    # not merely masked in the log: the command the provider runs never holds them, the environment does
    op = dag.get_task("ingest")
    op.render_template_fields({"params": {"base_path": base, "source_path": str(source)}})
    pq.write_table(_trips([4]), source / "b.parquet")  # work, so that prepare goes as far as the submit
    op.prepare({})
    command = op._get_hook()._build_spark_submit_command(op.application)
    assert not any(secret in arg for arg in command for secret in (server.secret_key, server.access_key))
    assert (op.env_vars["AWS_ACCESS_KEY_ID"], op.env_vars["AWS_SECRET_ACCESS_KEY"]) == \
        (server.access_key, server.secret_key)
    assert "spark.hadoop.fs.s3a.endpoint=" + server.endpoint in command
    shutil.rmtree(op._folder)  # execute() removes it when the job ends
    rows = pa.Table.from_batches(hudi.HudiTable(base, server.settings().hudi_rs_options()).read())
    assert sorted(rows.column("id").to_pylist()) == [1, 2, 3]


@pytest.mark.parametrize("master", ["yarn", "k8s://https://127.0.0.1:6443"])
def test_in_cluster_mode_the_options_package_and_result_travel_with_the_job_never_on_its_command_line(
    master, monkeypatch, tmp_path
):
    """The contract of cluster deploy mode, for YARN (run for real in test_cluster_mode.py) and Kubernetes
    (not run here: no cluster): what spark-submit is given."""
    import zipfile

    from hudi_ops.airflow.operators.spark_jobs import HudiBackfillOperator
    from hudi_ops.job_specs.results import RESULT_FILE_ENV
    from hudi_ops.options.properties_file import parse_props_file
    from hudi_ops.spark.cluster_mode import PROPS_NAME, RESULTS_FOLDER
    from hudi_ops.spark.driver_jvm import DRIVER_JAVA_OPTIONS

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CLUSTER", json.dumps(
        {"conn_type": "spark", "host": master, "extra": {"deploy-mode": "cluster", "namespace": "lake"}}))
    conf = {"spark.yarn.tags": "team-a"} if master == "yarn" else {
        "spark.kubernetes.container.image": "hudi-ops:0.1", "spark.kubernetes.file.upload.path": "s3a://lake/up"}
    op = HudiBackfillOperator(
        task_id="backfill", conn_id="spark_cluster", base_path=str(tmp_path / "trips"), table_name="trips",
        record_key_field="id", source_path="/in", start="2026-01-01", end="2026-01-02", zookeeper_conn_id=None,
        conf=conf, hoodie_conf={"hoodie.upsert.shuffle.parallelism": "3"})
    op.prepare({})
    cmd = op._get_hook()._build_spark_submit_command(op.application)
    confs = dict(cmd[i + 1].split("=", 1) for i, arg in enumerate(cmd) if arg == "--conf")
    assert cmd[cmd.index("--deploy-mode") + 1] == "cluster"
    # the options: a file Spark puts in the driver's working directory, readable by the task's user alone
    props = Path(cmd[cmd.index("--files") + 1])
    assert props.name == PROPS_NAME and cmd[cmd.index("--props") + 1] == PROPS_NAME
    assert parse_props_file(props.read_text())["hoodie.upsert.shuffle.parallelism"] == "3"
    assert props.stat().st_mode & 0o077 == 0
    assert not any("hoodie." in arg for arg in cmd)
    # the package, from the installed one, on the driver's Python path
    with zipfile.ZipFile(cmd[cmd.index("--py-files") + 1]) as package:
        assert {"hudi_ops/__init__.py", "hudi_ops/spark/__main__.py", "hudi_ops/spark/jobs/backfill.py"} <= set(
            package.namelist())
    # the result: on the table's storage, named to the driver by its environment
    env = "spark.yarn.appMasterEnv." if master == "yarn" else "spark.kubernetes.driverEnv."
    result = confs.pop(f"{env}{RESULT_FILE_ENV}")
    assert result.startswith(f"{tmp_path / 'trips' / RESULTS_FOLDER}/") and result.endswith(".json")
    # nothing of this worker's: its interpreter, PATH, process, or the driver JVM options made for it
    assert not [key for key in confs if key.startswith(env)] and DRIVER_JAVA_OPTIONS not in confs
    if master == "yarn":  # one attempt (Airflow retries), spark-submit waits, a tag of ours beside theirs
        assert confs["spark.yarn.maxAppAttempts"] == "1" and confs["spark.yarn.submit.waitAppCompletion"] == "true"
        ours, theirs = confs["spark.yarn.tags"].split(",")
        assert ours.startswith("hudi-ops-") and theirs == "team-a"
    else:
        assert cmd[1:3] == ["--master", master] and confs["spark.kubernetes.namespace"] == "lake"
        assert confs["spark.kubernetes.file.upload.path"] == "s3a://lake/up"
    shutil.rmtree(op._folder)


def test_s3_keys_are_refused_where_the_spark_provider_would_put_them_on_the_command_line(monkeypatch):
    """On YARN and Kubernetes the provider passes the environment as --conf settings: keys must come from
    the cluster's nodes there, and the task fails at once saying so."""
    from airflow.sdk.exceptions import AirflowFailException

    from hudi_ops.airflow.operators.table_services import HudiCompactionOperator

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_YARN", json.dumps({"conn_type": "spark", "host": "yarn"}))
    monkeypatch.setenv("AIRFLOW_CONN_LAKE", json.dumps(
        {"conn_type": "aws", "login": "AKIDEXAMPLE", "password": "not-a-real-secret-0123"}))
    op = HudiCompactionOperator(task_id="compact", base_path="s3a://lake/trips", table_name="trips",
                                zookeeper_conn_id=None, aws_conn_id="lake", conn_id="spark_yarn")
    with pytest.raises(AirflowFailException, match=r"on yarn the Spark provider would put them on spark-submit"):
        op.prepare({})
