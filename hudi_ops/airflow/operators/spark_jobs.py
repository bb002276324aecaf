"""Operators that run hudi-ops Spark jobs (Apache Hudi's writer) through the Spark provider's spark-submit.

`HudiSparkJobOperator` builds the job's typed spec (hudi_ops.job_specs) from its rendered arguments
(bad values fail the task before Spark starts, without retries), asks the control plane whether there is work (none: the
task is skipped in milliseconds, without a JVM, and says why), submits the job with Hudi's jars and
session settings, and maps its exit code: 2 (bad input) fails at once without retries; 3 (write
conflict), 4 (lock timeout) and 5 (a source that did not answer) raise a retryable error, and the
operator's defaults retry with exponential backoff. The job's JSON result is the task's return value,
and a write that committed adds an Asset event for the table.

A table on S3 names an Amazon `aws` connection (`aws_conn_id`): its endpoint and addressing become
s3a's Spark settings, its keys the spark-submit's environment. The job's hoodie.* options go to it in a
properties file (`--props`, readable by the task's user only), so neither keys nor options show in the
command line the task log prints and `ps` lists.

Only the provider's public API is used: the job writes its final line to a file the operator names
($HUDI_OPS_RESULT_FILE), the exit code is the one that line reports (a job killed before it wrote one
fails with the provider's error and Airflow's retries). In client mode (Spark's default) the driver
runs here: the file is local, and the provider's `on_kill`, which signals spark-submit's JVM, is enough
because the PySpark driver ends with that JVM, and with this task process when it dies hard
(hudi_ops.spark.driver_lifetime). In cluster mode (`deploy-mode` in the Spark connection's extra, or
the operator's `deploy_mode`) the options, the package and the result travel with the job
(hudi_ops.spark.cluster_mode), and the task reaches the driver through its cluster
(hudi_ops.spark.cluster_drivers): on YARN spark-submit returns once the application is accepted and the
task follows it through the ResourceManager's REST API (`deferrable`: in the triggerer); on Airflow 3.3 a
retry takes up the driver of a try that died (hudi_ops.airflow.operators.resumable); `on_kill` and each try that
submits end the task's live drivers.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
import os
import shutil
import tempfile
import time
import urllib.error
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, AssetAlias, BaseHook
from airflow.sdk.exceptions import (
    AirflowException,
    AirflowFailException,
    AirflowNotFoundException,
    AirflowSkipException,
    TaskDeferred,
)

from hudi_ops.airflow import metrics
from hudi_ops.airflow.hooks.aws import table_s3
from hudi_ops.airflow.hooks.hive_metastore import metastore_options
from hudi_ops.airflow.hooks.kafka import DEFAULT_CONN_ID as DEFAULT_KAFKA_CONN_ID
from hudi_ops.airflow.hooks.kafka import kafka_options
from hudi_ops.airflow.hooks.zookeeper_lock import ZookeeperLockHook
from hudi_ops.airflow.operators.resumable import ApplicationRecord, SubmittedApplication
from hudi_ops.airflow.triggers.yarn_application import YarnApplicationTrigger
from hudi_ops.errors import (
    EXIT_BAD_INPUT,
    EXIT_CONFLICT,
    EXIT_LOCK_TIMEOUT,
    EXIT_SOURCE_UNAVAILABLE,
    ConfigError,
    HudiOpsError,
    InvalidInputError,
    is_write_conflict,
)
from hudi_ops.job_specs import BackfillSpec, IngestSpec, JobFailure, JobResult, JobSpec, ServiceResult, WriteSpec
from hudi_ops.job_specs.results import RESULT_FILE_ENV, read_result_file, remove_result_file
from hudi_ops.job_specs.writes import KAFKA_KINDS
from hudi_ops.options.job_defaults import resolve_job_options
from hudi_ops.options.keys import MetaSyncConfig
from hudi_ops.options.properties_file import props_file_text
from hudi_ops.s3_settings import S3Settings
from hudi_ops.sources.files import ingest_work
from hudi_ops.sources.hudi_table import upstream_work
from hudi_ops.sources.kafka import (
    CLIENT_PREFIX,
    client_settings,
    fails_on_data_loss,
    kafka_work,
    value_schema_file,
)
from hudi_ops.spark import driver_jvm
from hudi_ops.spark.cluster_drivers import (
    ClusterDrivers,
    Driver,
    Gone,
    KubernetesDrivers,
    YarnApplications,
    followed_to_its_end,
)
from hudi_ops.spark.cluster_mode import (
    PROPS_NAME,
    WAIT_APP_COMPLETION,
    Deployment,
    application_tag,
    cluster_conf,
    package_zip,
    result_uri,
)
from hudi_ops.spark.driver_lifetime import TASK_PROCESS_ENV, task_process
from hudi_ops.spark.jobs.meta_sync import SYNCED_AFTER
from hudi_ops.spark.jobs_python import CONNECTION_EXTRA as JOBS_PYTHON_EXTRA
from hudi_ops.spark.jobs_python import JobsPython, jobs_python, named_jobs_python
from hudi_ops.spark.kafka_connector import kafka_jars
from hudi_ops.spark.kubernetes_pods import NO_CREDENTIALS, KubernetesTarget
from hudi_ops.spark.launch import APPLICATION, job_launch
from hudi_ops.spark.yarn_applications import YarnApplication, resource_managers
from hudi_ops.storage import Storage

#: the Spark provider's durable execution (6.2 on): on by default, and in YARN cluster mode without its own tracking
#: through the ResourceManager it refuses to submit (ValueError: "requires yarn_track_via_rm_api=True")
_PROVIDER_DURABLE = "durable" in inspect.signature(SparkSubmitOperator.__init__).parameters
RETRY_DEFAULTS = {"retries": 3, "retry_delay": dt.timedelta(seconds=15), "retry_exponential_backoff": True,
                  "max_retry_delay": dt.timedelta(minutes=5)}


def table_asset(base_path: str) -> Asset:
    """The Asset a table's writes update, named by the table's URI."""
    uri = base_path if "://" in base_path else Path(base_path).resolve().as_uri()
    return Asset(uri=uri, name=f"hudi-table:{uri}")


def writes_alias(table_name: str) -> AssetAlias:
    return AssetAlias(f"hudi-writes:{table_name}")


@dataclasses.dataclass(frozen=True)
class FoundWork:
    """What a task found before spark-submit: why there is nothing to do (None: there is work), and, when
    the work is large, what it is (the driver's JVM then runs for throughput: hudi_ops.spark.driver_jvm)."""

    idle: str | None = None
    large: str | None = None


class HudiSparkJobOperator(SparkSubmitOperator):
    """Base: one hudi-ops Spark job on one table, with the table's options and its lock's."""

    spec_type: type[JobSpec] = JobSpec

    @property
    def job(self) -> str:
        return self.spec_type.JOB
    template_fields: Sequence[str] = (*SparkSubmitOperator.template_fields, "base_path", "table_name", "hoodie_conf")

    def __init__(
        self, *, base_path: str, table_name: str, hoodie_conf: Mapping[str, str] | None = None,
        zookeeper_conn_id: str | None = ZookeeperLockHook.default_conn_name, aws_conn_id: str | None = None,
        hive_metastore_conn_id: str | None = None, deferrable: bool = False, poll_interval: float = 10.0,
        **kwargs: Any,
    ) -> None:
        for key, value in RETRY_DEFAULTS.items():
            kwargs.setdefault(key, value)
        kwargs.setdefault("name", f"hudi-ops-{self.job}-{table_name}")
        if _PROVIDER_DURABLE:  # hudi-ops ends and retries a try's application itself (its tag, the batch fence)
            kwargs.setdefault("durable", False)
        super().__init__(application=APPLICATION, **kwargs)
        self.base_path, self.table_name = base_path, table_name
        self.hoodie_conf = dict(hoodie_conf or {})
        self.zookeeper_conn_id = zookeeper_conn_id
        self.aws_conn_id = aws_conn_id  # an S3 table's store (and an S3 source's)
        self.hive_metastore_conn_id = hive_metastore_conn_id  # the catalog a table is synced to
        #: a YARN cluster-mode job the task follows through the ResourceManager: waited for in the triggerer
        self.deferrable, self.poll_interval = deferrable, poll_interval
        self.deploy_mode = kwargs.get("deploy_mode")  # None: the Spark connection's `deploy-mode` extra
        self.spark_conn_id = kwargs.get("conn_id", "spark_default")  # the provider keeps it private
        self._spec: JobSpec | None = None  # the run's, once `prepare` made it
        self._folder: Path | None = None  # its options file and result file, from `prepare` to the end
        self._result_file = ""  # where the job writes its final line: a path here, or a URI on the table's storage
        self._tag = ""  # a cluster-mode YARN application's, for on_kill
        self._submitting = False
        self._following = False  # an earlier try's YARN application, taken up
        self._killed = False
        self._record: ApplicationRecord | None = None  # the task's record of its YARN application (Airflow 3.3)
        self._tags: dict[str, str] = {}  # its metrics'
        self._started = 0.0  # when its spark-submit started (time.monotonic)
        self._reported = False  # whether this try's failure is counted
        #: what the run came to, for its lineage: the job's final line, or why it did nothing
        self._outcome_seen: JobResult | ServiceResult | JobFailure | None = None
        self._idle: str | None = None

    @cached_property
    def s3(self) -> S3Settings | None:
        """How the control plane and the job reach the table on S3; None: not on S3, or from the environment."""
        return table_s3(self.aws_conn_id)

    @cached_property
    def _spark_connection(self) -> tuple[str, dict[str, Any]]:
        """The Spark connection's master and extra, as the provider reads them (its defaults without one)."""
        if self.spark_conn_id:
            try:
                conn = BaseHook.get_connection(self.spark_conn_id)
            except AirflowNotFoundException:
                pass
            else:
                return (f"{conn.host}:{conn.port}" if conn.port else (conn.host or "")), conn.extra_dejson
        return "yarn", {}

    @cached_property
    def deployment(self) -> Deployment:
        """Where spark-submit sends the job, read from the Spark connection as the provider reads it."""
        master, extra = self._spark_connection
        conf_mode = (self.conf or {}).get("spark.submit.deployMode")
        deployment = Deployment(master, self.deploy_mode or conf_mode or extra.get("deploy-mode"))
        if deployment.is_cluster and not (deployment.is_yarn or deployment.is_kubernetes):
            raise ConfigError(f"cluster deploy mode on {master!r}: hudi-ops runs a driver on the cluster on YARN or "
                              "Kubernetes only (PySpark has no cluster mode on a standalone master); use client "
                              "mode there (`deploy-mode` in the Spark connection's extra)")
        return deployment

    @cached_property
    def jobs_python(self) -> JobsPython:
        """The interpreter of a client-mode driver: the Spark connection's `pyspark-python` extra, else
        $PYSPARK_PYTHON, else this one; refused (ConfigError) without PySpark 3.5 and the jobs' imports."""
        return jobs_python(named_jobs_python(self._spark_connection[1].get(JOBS_PYTHON_EXTRA)))

    def _check_keys_stay_off_the_command_line(self) -> None:
        if not (self.s3 and self.s3.access_key_id):
            return
        if self.deployment.is_yarn or self.deployment.is_kubernetes:
            raise ConfigError(
                f"the connection {self.aws_conn_id!r} holds S3 keys, and on {self.deployment.master} the Spark "
                "provider would put "
                "them on spark-submit's command line (as the driver's environment); give the cluster's nodes "
                "their S3 access (an instance role, or fs.s3a.* in core-site.xml) and leave the connection's "
                "login and password empty")

    def job_options(self) -> dict[str, str]:
        """What the job runs with (hudi_ops.options.job_defaults), resolved here too, so that the `--props`
        file and the look for work see the options the job will."""
        options = ZookeeperLockHook(self.table_name, zookeeper_conn_id=self.zookeeper_conn_id,
                           table_options=self.hoodie_conf).write_options()
        # the jobs that sync (hudi_ops.spark.jobs.meta_sync), unless the table's options name the metastore
        if self.hive_metastore_conn_id and self.job in SYNCED_AFTER and MetaSyncConfig.enabled(options) and \
                not options.get(MetaSyncConfig.METASTORE_URIS.name):
            options = {**options, **metastore_options(self.hive_metastore_conn_id)}
        return resolve_job_options(self.job, options)

    def job_spec(self, context: Any, options: Mapping[str, str]) -> JobSpec:
        """The run's spec, with `options` as its hoodie.* options; bad values raise InvalidInputError."""
        raise NotImplementedError

    def find_work(self, context: Any, spec: JobSpec) -> FoundWork:
        """What the job has to do, asked of the table in Python: nothing (why), or work (how much)."""
        return FoundWork()

    def extra_jars(self) -> tuple[str, ...]:
        """Jars the job needs besides Hudi's and s3a's (a Kafka ingest: Spark's Kafka reader)."""
        return ()

    @cached_property
    def cluster(self) -> ClusterDrivers | None:
        """Where a cluster-mode job's driver is asked after, followed and ended: the ResourceManagers of the
        yarn-site.xml in the task's $HADOOP_CONF_DIR or $YARN_CONF_DIR, or the Kubernetes API; None: in client
        mode, or on YARN without a yarn-site.xml or with the job's conf saying that spark-submit waits for the
        application's end (`spark.yarn.submit.waitAppCompletion=true`: a ResourceManager whose REST API asks
        for Kerberos)."""
        if not self.deployment.is_cluster:
            return None
        env = {**os.environ, **(self.env_vars or {})}
        if self.deployment.is_kubernetes:
            namespace = self._spark_connection[1].get("namespace")
            return KubernetesDrivers(KubernetesTarget.of(self.deployment.master, self.conf or {}, namespace), env)
        if str((self.conf or {}).get(WAIT_APP_COMPLETION, "")).strip().lower() == "true":
            return None
        urls = resource_managers(env)
        return YarnApplications(tuple(urls)) if urls else None

    @property
    def _tracked(self) -> bool:
        """Whether spark-submit returns once the cluster has accepted the job, the task following it: on YARN
        (Kubernetes' spark-submit must wait: the Spark provider takes the job's exit code from its log)."""
        return isinstance(self.cluster, YarnApplications)

    def _checked_spec(self, context: Any) -> JobSpec:
        """The run's spec with the job's options; bad values fail the task without retries."""
        try:
            return self.job_spec(context, self.job_options())
        except InvalidInputError as e:
            raise AirflowFailException(f"bad job arguments, not retried: {e}") from e

    def _task_tag(self, context: Any) -> str:
        return application_tag(self.dag_id, self.task_id, context.get("run_id"),
                               getattr(context.get("ti"), "map_index", -1))

    def prepare(self, context: Any) -> None:
        """Everything before spark-submit: the job's arguments checked, work looked for (none: the task
        is skipped), Hudi's jars and session settings added to the submit."""
        spec = self._checked_spec(context)
        try:
            options_file = props_file_text(spec.options())
            self._check_keys_stay_off_the_command_line()
            if self.deployment.is_cluster:  # its settings checked before anything is written
                self._tag = self._task_tag(context)
                on_cluster_conf = cluster_conf(self.deployment, self._tag, self.conf or {}, tracked=self._tracked)
            jobs = None if self.deployment.is_cluster else self.jobs_python
            found = self.find_work(context, spec)
            if not found.idle:  # a skipped run launches nothing
                launch = job_launch(on_cluster_conf if self.deployment.is_cluster else self.conf,
                                    jars=self.extra_jars(), s3=self.s3, client_mode=not self.deployment.is_cluster,
                                    large=bool(found.large), jobs=jobs)
        except InvalidInputError as e:
            raise AirflowFailException(f"bad job arguments, not retried: {e}") from e
        except HudiOpsError as e:  # the table or the source could not be read just now: try again
            raise AirflowException(f"cannot tell whether there is work, retried with backoff: {e}") from e
        if found.idle:
            self._idle = found.idle
            raise AirflowSkipException(found.idle)
        if self.s3:
            self.log.info("%s is reached through connection %s: %s", self.base_path, self.aws_conn_id, self.s3)
        self._spec = spec
        self._folder = Path(tempfile.mkdtemp(prefix="hudi-ops-job-"))  # the task's user's alone
        on_cluster = self.deployment.is_cluster
        props = self._folder / PROPS_NAME
        props.touch(mode=0o600)
        props.write_text(options_file)
        env = self.s3.env() if self.s3 else {}
        if on_cluster:  # everything the driver needs travels with the job (hudi_ops.spark.cluster_mode)
            self._result_file = result_uri(self.base_path)
            self.files = _joined(str(props), self.files)
            self.py_files = _joined(str(package_zip(self._folder)), self.py_files)
            props_arg = PROPS_NAME  # in the driver's working directory
        else:
            self._result_file = str(self._folder / "result.json")
            # the driver ends with this task process (client mode): a retry never runs beside an orphan
            assert jobs is not None
            if not jobs.is_this_interpreter:  # its driver runs this task's package, as on a cluster
                self.py_files = _joined(str(package_zip(self._folder)), self.py_files)
            env = {**jobs.env(), **env, TASK_PROCESS_ENV: task_process()}
            if found.large and driver_jvm.DRIVER_JAVA_OPTIONS not in (self.conf or {}):
                self.log.info("%s: the driver's JVM runs for throughput (its full compiler, the parallel "
                              "collector)", found.large)
            props_arg = str(props)
        if self.deferrable and not self._tracked:
            self.log.warning("deferrable is for a YARN cluster-mode job whose ResourceManager yarn-site.xml names; "
                             "this one (%s) runs without deferring", self.deployment)
        self.application_args = dataclasses.replace(spec, props=props_arg, hoodie_conf={}).to_argv()
        self.env_vars = {**env, **(self.env_vars or {}), RESULT_FILE_ENV: self._result_file}
        self.jars = _joined(",".join(launch.jars), self.jars)
        self.conf = launch.conf

    def execute(self, context: Any) -> dict[str, Any] | None:
        self._tags = metrics.job_tags(self.table_name, self.dag_id, self.job)
        metrics.retried(self._tags, getattr(context.get("ti"), "try_number", 1) or 1)
        self._record = ApplicationRecord(context)
        self._started = time.monotonic()
        try:
            return self._run(context)
        except (TaskDeferred, AirflowSkipException):
            raise
        except InvalidInputError as e:  # a bad setting (the cluster's, the job's): not retried
            metrics.failed(self._tags, None, None, None)
            raise AirflowFailException(f"bad job arguments, not retried: {e}") from e
        except BaseException:  # a kill, a timeout (BaseException too), a job that left no result
            if not self._reported:
                metrics.failed(self._tags, None, None, _ms_since(self._started) if self._submitting else None)
            raise
        finally:
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)

    def _run(self, context: Any) -> dict[str, Any] | None:
        if (taken := self._earlier_application(context)) is not None:
            return taken
        try:
            self.prepare(context)
        except AirflowSkipException:
            metrics.skipped(self._tags)
            raise
        self._submitting = True  # from here on, on_kill ends whatever this try may have started
        if self._killed:  # while it looked for work
            raise AirflowException("the task was killed before spark-submit started")
        if self._tag:  # an earlier try's driver, left running when its task died
            self._end_live_drivers("an earlier try of this task left running")
        submission = self._submission()
        if self._killed:  # while it asked the cluster: spark-submit never starts
            raise AirflowException("the task was killed before spark-submit started")
        try:
            super().execute(context)
        except AirflowException as e:
            outcome = self._outcome_seen = self._outcome()  # its failure, for lineage too
            if not isinstance(outcome, JobResult | ServiceResult):  # a job that ended well keeps it for the retry
                self._remove_result()
            raise self._failed(e, outcome) from e
        if not self._tracked:  # spark-submit waited for the job's end
            return self._concluded(context, None)
        assert submission is not None  # a followed job's submission is always listed (or the try failed)
        return self._followed(context, self._submitted(submission))

    def execute_complete(self, context: Any, event: Mapping[str, Any], submitted_at: float | None = None,
                         ) -> dict[str, Any] | None:
        """Back from the triggerer, once the YARN application has ended: its result taken (a fresh operator: what
        execute set is gone; the event and `submitted_at`, the wall clock's when the try started, say the rest)."""
        self._tags = metrics.job_tags(self.table_name, self.dag_id, self.job)
        self._started = time.monotonic() - (time.time() - submitted_at if submitted_at else 0.0)
        if error := event.get("error"):  # the ResourceManager refused the triggerer, or stopped answering
            metrics.failed(self._tags, None, None, None)
            raise AirflowException(f"the wait for {event['application_id']} in the triggerer failed: {error}")
        self._spec = self._checked_spec(context)
        self._result_file, reported = event["result_uri"], event["application"]
        return self._concluded(context, YarnApplication(**reported) if reported else Gone(event["application_id"]))

    def _earlier_application(self, context: Any) -> dict[str, Any] | None:
        """An earlier try's driver taken up (hudi_ops.airflow.operators.resumable): followed while it runs, its
        result taken once it ended well (or, gone from the cluster, when its result says so); None: there is none
        to take up, and this try submits the job."""
        assert self._record is not None
        if not (self._record.kept and self.cluster):
            return None
        record = self._record.earlier(self._task_tag(context))
        if record is None:
            return None
        self._spec, self._result_file, self._tag = self._checked_spec(context), record.result_uri, record.tag
        self._following = True  # from here on, on_kill ends the task's drivers
        try:
            app = record.find(self.cluster)
        except OSError as e:  # it cannot say: trying again is safer than a second driver beside the first
            raise self._unanswered(e, f"did not say how {record.tag}'s driver is") from e
        if app is not None and app.live and not getattr(app, "deleting", False):
            self.log.info("the earlier try's driver %s still runs: this try takes it up", app.id)
            return self._followed(context, app)
        outcome = self._outcome() if app is None or app.succeeded else None
        if isinstance(outcome, JobResult | ServiceResult):
            self.log.info("the earlier try's driver %s ended well: this try takes its result",
                          app.id if app else record.tag)
            return self._concluded(context, app or Gone(record.application_id or record.tag), outcome)
        self.log.warning("the earlier try's driver %s: the job is submitted again", (
            f"{app.id} is being deleted" if app is not None and app.live else f"{app.id} ended {app.ended_as()}"
            if app is not None and not app.succeeded else f"{record.tag} left no result to take"))
        self._remove_result()  # a stale one; the new submission writes its own
        self._following = False
        return None

    def _submission(self) -> SubmittedApplication | None:
        """This try's submission as it is about to start: the drivers its tag names already, so that the one it
        submits is told apart; kept in the task's state store, if any, for a retry. None: nothing to follow or
        keep (client mode; a cluster not followed, on an Airflow without the store or listing nothing now)."""
        assert self._record is not None
        if self.cluster is None or not (self._tracked or self._record.kept):
            return None
        try:
            known = tuple(driver.id for driver in self.cluster.tagged(self._tag))
        except OSError as e:
            if self._tracked:  # its application could not be told from an earlier one: trying again is safer
                raise self._unanswered(e, "did not list the task's applications") from e
            self.log.warning("%s did not list the task's drivers (%s): a retry will not take this one up",
                             self.cluster.where, e)
            return None
        submission = SubmittedApplication(self._tag, self._result_file, self._record.clear_number, known)
        self._record.save(submission)
        return submission

    def _submitted(self, submission: SubmittedApplication) -> Driver:
        """The application spark-submit has just had YARN accept, recorded."""
        assert self._record is not None and self.cluster is not None
        try:
            app = submission.find(self.cluster)
        except OSError as e:  # the record finds it by its tag
            raise self._unanswered(e, "accepted the job, but did not say which application it is") from e
        if app is None:
            raise AirflowException(f"spark-submit ended well, but YARN has no application tagged {self._tag}")
        self._record.save(dataclasses.replace(submission, application_id=app.id))
        return app

    def _followed(self, context: Any, app: Driver) -> dict[str, Any] | None:
        """`app` followed to its end (in the triggerer when deferrable, on YARN), its result taken."""
        assert self.cluster is not None
        if self.deferrable and isinstance(self.cluster, YarnApplications):
            self.log.info("%s runs on YARN: the task waits in the triggerer", app.id)
            self.defer(trigger=YarnApplicationTrigger(resource_managers=list(self.cluster.rm_urls),
                                                      application_id=app.id, result_uri=self._result_file,
                                                      poll_s=self.poll_interval),
                       method_name="execute_complete", timeout=self.execution_timeout,
                       kwargs={"submitted_at": time.time() - _ms_since(self._started) / 1000})
        self.log.info("following %s through %s", app.id, self.cluster.where)
        try:
            ended = followed_to_its_end(self.cluster, app, poll_s=self.poll_interval, stopped=lambda: self._killed,
                                        warn=self.log.warning)
        except InterruptedError as e:  # on_kill may have looked before this try knew its driver: end it again
            self._end_live_drivers("the task was killed", timeout_s=4)
            raise AirflowException(f"the task was killed while {app.id} ran") from e
        except PermissionError as e:  # refused, not silent: asking again would not help
            raise self._unanswered(e, f"refused to say how {app.id} is") from e
        return self._concluded(context, ended)

    def _concluded(self, context: Any, app: Driver | None,
                   outcome: JobResult | ServiceResult | JobFailure | None = None) -> dict[str, Any] | None:
        """The run's end: the job's result (its final line) returned and announced; a failure raised. A driver
        the cluster no longer reports ended as its result says."""
        outcome = self._outcome_seen = outcome or self._outcome()
        elapsed = (app.elapsed_ms if app is not None else 0) or _ms_since(self._started)
        ended_well = isinstance(app, Gone) and isinstance(outcome, JobResult | ServiceResult)
        if app is not None and not (app.succeeded or ended_well):
            self._remove_result()  # the retry submits anew
            raise self._failed(AirflowException(f"the driver {app.id} ended {app.ended_as()}"), outcome, elapsed)
        if outcome is None:  # its commit, if any, is found by the retry (the batch's fence and identity)
            raise self._failed(AirflowException(f"the job ended well but left no result at {self._result_file}; "
                                                "retried"), None, elapsed)
        result = outcome.to_dict() if isinstance(outcome, JobResult | ServiceResult) else None
        metrics.ran(self._tags, result or {}, elapsed)
        self.announce(context, result or {})
        self._remove_result()
        return result

    def _unanswered(self, error: OSError, what: str) -> AirflowException:
        """The cluster's failure to answer, as the task's: retried, unless it asks for Kerberos, which it will
        ask again (a YARN job then needs spark-submit to wait for it)."""
        assert self.cluster is not None
        if isinstance(error, urllib.error.HTTPError) and error.code == 401 and isinstance(self.cluster,
                                                                                       YarnApplications):
            return AirflowFailException(
                f"{self.cluster.where} {what}: it asks for Kerberos (HTTP 401), which hudi-ops' REST calls do not "
                "speak; set spark.yarn.submit.waitAppCompletion=true in the job's conf (a table's `spark_conf`) so "
                "that spark-submit waits for the application instead")
        return AirflowException(f"{self.cluster.where} {what}, retried: {error}")

    def _failed(self, error: AirflowException, outcome: object, elapsed: float | None = None) -> AirflowException:
        """The try's failure, counted, as Airflow should take it (hudi_ops.errors' exit codes)."""
        code, reason = (outcome.exit_code, outcome.error) if isinstance(outcome, JobFailure) else (None, None)
        metrics.failed(self._tags, code, reason, _ms_since(self._started) if elapsed is None else elapsed)
        self._reported = True
        return self._failure(error, outcome)

    def on_kill(self) -> None:
        # the provider's on_kill builds its hook from the fields as they are; before `prepare` has set
        # them, that hook would be the one spark-submit then starts from
        self._killed = True
        if self._following:  # an earlier try's driver: no spark-submit of this try's to end
            self._end_live_drivers("the task was killed", timeout_s=4)
            return
        if not self._submitting:
            return
        try:  # spark-submit first: once it is gone, no driver can be submitted after the look below
            super().on_kill()
        except Exception as e:  # its own kill of the driver: `yarn application -kill` without Hadoop's client, a
            # ResourceManager (provider 6.x) or Kubernetes client it is not configured for; hudi-ops' own follows
            self.log.info("the Spark provider's kill of the driver did not finish (%r); hudi-ops ends it", e)
        if self._tag:  # the driver is on the cluster: ending spark-submit leaves it
            self._end_live_drivers("the task was killed", timeout_s=4)

    def _end_live_drivers(self, why: str, *, timeout_s: float = 10) -> None:
        """Best effort: the task's live cluster-mode drivers ended, through the ResourceManager's REST API or the
        Kubernetes API (no `yarn` or `kubectl` needed)."""
        if self.cluster is None:
            self.log.warning("no yarn-site.xml in $HADOOP_CONF_DIR or $YARN_CONF_DIR, or the job's conf has "
                             "spark-submit wait for the application: hudi-ops asks YARN about nothing, so the "
                             "applications tagged %s (%s) are ended only by the provider's `yarn application "
                             "-kill` of the one its spark-submit runs", self._tag, why)
            return
        try:
            ended = self.cluster.end_live(self._tag, timeout_s=timeout_s)
        except Exception as e:  # never in the way of the kill or the try; the batch's fence keeps writes once
            self.log.warning("%s did not end the drivers tagged %s (%s): %s", self.cluster.where, self._tag, why, e)
            return
        if ended is None:
            self.log.warning("%s: the driver pods labelled %s are left to the Spark provider's own kill",
                             NO_CREDENTIALS, self._tag)
        elif ended:
            self.log.warning("%s: %s ended %s", why, self.cluster.where, ", ".join(ended))

    def _outcome(self) -> JobResult | ServiceResult | JobFailure | None:
        """What the job's final line said; None when it wrote none (it was killed, or Spark failed first)."""
        assert self._spec is not None
        try:
            line = read_result_file(self._result_file, s3=self.s3)
        except (OSError, ValueError, HudiOpsError) as e:
            self.log.warning("could not read the job's result at %s: %s", self._result_file, e)
            return None
        return self._spec.parse_result(line) if line is not None else None

    def _remove_result(self) -> None:
        """A cluster-mode job's result file removed from the table's storage, once the run has ended with it."""
        if self.deployment.is_cluster and self._result_file:
            remove_result_file(self._result_file, s3=self.s3)

    def announce(self, context: Any, result: Mapping[str, Any]) -> None:
        """What a successful run tells Airflow besides its result (writers: an Asset event)."""

    def lineage_sources(self) -> tuple[str, ...]:
        """What the job reads besides the table (a writer's source folder); none: it reads the table."""
        return ()

    # OpenLineage (hudi_ops.airflow.lineage), called by Airflow's OpenLineage provider when it is installed
    def get_openlineage_facets_on_start(self) -> Any:
        from hudi_ops.airflow.lineage import lineage

        return lineage(job=self.job, table=self.base_path, sources=self.lineage_sources(), with_facets=False)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        from hudi_ops.airflow.lineage import lineage

        outcome = self._outcome_seen
        result = outcome.to_dict() if isinstance(outcome, JobResult | ServiceResult) else None
        return lineage(job=self.job, table=self.base_path, sources=self.lineage_sources(), result=result,
                       skipped=self._idle, s3=self.s3)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        from hudi_ops.airflow.lineage import lineage

        failure = self._outcome_seen if isinstance(self._outcome_seen, JobFailure) else None
        return lineage(job=self.job, table=self.base_path, sources=self.lineage_sources(), failure=failure,
                       s3=self.s3)

    @staticmethod
    def _failure(error: AirflowException, outcome: object) -> AirflowException:
        if not isinstance(outcome, JobFailure):  # no diagnosis: Airflow's retries decide
            return error
        code, message = outcome.exit_code, outcome.message
        if code == EXIT_BAD_INPUT:
            return AirflowFailException(f"bad input (exit {code}), not retried: {message}")
        if code in (EXIT_CONFLICT, EXIT_LOCK_TIMEOUT):
            # exit 3: a write conflict, or another job doing the same thing (a plan, a rollback, a new table)
            conflict = is_write_conflict(outcome.error)
            what = "lock timeout" if code == EXIT_LOCK_TIMEOUT else "write conflict" if conflict else "concurrent job"
            return AirflowException(f"{what} (exit {code}), retried with backoff: {message}")
        if code == EXIT_SOURCE_UNAVAILABLE:
            return AirflowException(f"the source did not answer (exit {code}), retried with backoff: {message}")
        return error


class HudiWriteOperator(HudiSparkJobOperator):
    """Base of the writers: a source written into the table through Hudi's datasource. A write that
    committed adds an Asset event for the table."""

    spec_type: type[WriteSpec] = WriteSpec
    template_fields: Sequence[str] = (*HudiSparkJobOperator.template_fields, "source_path", "source_format",
                                      "operation")

    def __init__(
        self, *, table_name: str, record_key_field: str, source_path: str | None = None,
        partition_path_field: str | None = None, ordering_field: str | None = None,
        table_type: str | None = None, source_format: str = "parquet", operation: str = "UPSERT",
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("outlets", [writes_alias(table_name)])
        super().__init__(table_name=table_name, **kwargs)
        self.source_path = source_path
        self.record_key_field, self.partition_path_field, self.ordering_field = (
            record_key_field, partition_path_field, ordering_field,
        )
        self.table_type, self.source_format, self.operation = table_type, source_format, operation

    def job_spec(self, context: Any, options: Mapping[str, str]) -> WriteSpec:
        return self.spec_type(
            base_path=self.base_path, table_name=self.table_name, record_key_field=self.record_key_field,
            partition_path_field=self.partition_path_field, ordering_field=self.ordering_field,
            table_type=self.table_type, source_path=self.source_path, source_format=self.source_format,
            operation=self.operation, hoodie_conf=options, run_id=run_identity(context), **self.batch_flags(context))

    def batch_flags(self, context: Any) -> dict[str, Any]:
        """The job's own flags of what the run writes."""
        return {}

    def lineage_sources(self) -> tuple[str, ...]:
        return (self.source_path,) if self.source_path else ()

    def announce(self, context: Any, result: Mapping[str, Any]) -> None:
        if result.get("instant"):
            context["outlet_events"][writes_alias(self.table_name)].add(
                table_asset(self.base_path), extra={k: result.get(k) for k in ("instant", "operation", "rows")}
            )


class HudiIngestOperator(HudiWriteOperator):
    """`ingest`: what the table's ingest has not taken from its source, skipped without starting Spark when
    nothing arrived. From a landing folder (`source_path`): the files, whatever their modification
    times, in one commit or in commits of at most `source_limit` bytes and `source_limit_files` files (0:
    no bound). From an upstream Hudi table (`source_kind="hudi"`, `source_path` its base path): its
    changes since the checkpoint. From a Kafka topic (`source_kind="kafka"`, or `"debezium"` for a change
    log; `kafka_topic`; `kafka_conn_id`, a connection of the Kafka provider's type): its messages up to the
    end offsets at the run's start, in commits of at most `source_limit_events` (0: no bound);
    `kafka_value_format` "avro" or "confluent_avro" with the schema file in `hoodie_conf`'s
    hoodie.streamer.schemaprovider.source.schema.file. `freshness`: the table's goal in minutes, sent
    as a gauge beside the lag (the DAG's deadline alert holds the runs to it)."""

    spec_type = IngestSpec
    template_fields: Sequence[str] = (*HudiWriteOperator.template_fields, "kafka_topic")

    def __init__(self, *, source_limit: int = 0, source_limit_files: int = 0, source_kind: str = "files",
                 kafka_topic: str | None = None, kafka_conn_id: str = DEFAULT_KAFKA_CONN_ID,
                 source_limit_events: int = 0, kafka_value_format: str = "json", freshness: float | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.freshness = freshness  # the table's goal, minutes (hudi_ops.airflow.dag_factory.freshness)
        self.source_limit, self.source_limit_files = source_limit, source_limit_files
        self.source_kind, self.kafka_topic, self.kafka_conn_id = source_kind, kafka_topic, kafka_conn_id
        self.source_limit_events, self.kafka_value_format = source_limit_events, kafka_value_format

    def execute(self, context: Any) -> dict[str, Any] | None:
        if self.freshness is not None:
            metrics.freshness_goal(self.table_name, self.freshness)
        return super().execute(context)

    @property
    def reads_kafka(self) -> bool:
        return self.source_kind in KAFKA_KINDS

    def job_options(self) -> dict[str, str]:
        """With a Kafka ingest's client settings (`kafka.*`, secrets among them): they reach the job in its
        `--props` file, readable by the task's user only."""
        options = super().job_options()
        return {**options, **kafka_options(self.kafka_conn_id)} if self.reads_kafka else options

    def batch_flags(self, context: Any) -> dict[str, Any]:
        return {"source_limit": self.source_limit, "source_limit_files": self.source_limit_files,
                "source_kind": self.source_kind, "kafka_topic": self.kafka_topic,
                "source_limit_events": self.source_limit_events, "kafka_value_format": self.kafka_value_format}

    def extra_jars(self) -> tuple[str, ...]:
        return kafka_jars() if self.reads_kafka else ()

    def lineage_sources(self) -> tuple[str, ...]:
        """A Kafka ingest's topic as `kafka://BROKER/TOPIC` (OpenLineage's naming: the first broker the
        connection names); none when the connection cannot be read (lineage never fails a task)."""
        if not self.reads_kafka:
            return super().lineage_sources()
        try:
            brokers = kafka_options(self.kafka_conn_id).get(CLIENT_PREFIX + "bootstrap.servers", "")
        except HudiOpsError:
            return ()
        broker = brokers.split(",")[0].strip()
        return (f"kafka://{broker}/{self.kafka_topic}",) if broker and self.kafka_topic else ()

    def find_work(self, context: Any, spec: IngestSpec) -> FoundWork:  # type: ignore[override]
        if self.reads_kafka:
            options = spec.options()
            value_schema_file(options, spec.kafka_value_format)  # named; read where the job runs
            work = kafka_work(spec.base_path, str(spec.kafka_topic), client_settings(options),
                              fail_on_data_loss=fails_on_data_loss(options), s3=self.s3)
            if not work.events:
                return FoundWork(f"nothing to ingest: {work.describe()}")
            return FoundWork(large=work.describe() if work.events >= driver_jvm.LARGE_EVENTS else None)
        assert spec.source_path is not None  # the spec's own check
        if spec.source_kind == "hudi":
            upstream = upstream_work(spec.base_path, spec.source_path, spec.options(), s3=self.s3)
            return FoundWork(None if upstream.writes else f"nothing to ingest: {upstream.describe()}")
        work = ingest_work(spec.base_path, Storage.for_uri(spec.source_path, s3=self.s3), spec.source_format,
                           s3=self.s3)
        for warning in work.warnings():
            self.log.warning("%s", warning)
        return FoundWork(None if work.files else f"nothing to ingest: no new source files in {spec.source_path} " + (
            f"since the table's checkpoint {work.position}" if work.checkpoint else "(the folder is empty)"))


class HudiBackfillOperator(HudiWriteOperator):
    """`backfill`: the source's dt=YYYY-MM-DD folders from `start` to `end`, one commit per day. A run of an
    Airflow backfill (`airflow backfill create`) writes its data interval's days instead; any other run
    needs `start` and `end` (empty: not given), and fails at once without them."""

    spec_type = BackfillSpec
    template_fields: Sequence[str] = (*HudiWriteOperator.template_fields, "start", "end")

    def __init__(self, *, start: str | dt.date | None = None, end: str | dt.date | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start, self.end = start, end

    def batch_flags(self, context: Any) -> dict[str, Any]:
        # with the run's identity: a retry of the run skips the days it committed, another run (or the
        # run cleared) writes them again
        run = context.get("dag_run")
        if run is not None and run.run_type == "backfill":  # its day(s): the interval's end is exclusive
            last = context["data_interval_end"] - dt.timedelta(microseconds=1)
            return {"start": context["data_interval_start"].date().isoformat(), "end": last.date().isoformat()}
        if not (self.start and self.end):
            raise InvalidInputError(
                f"a manual run of {self.dag_id} needs a window: trigger it with `start` and `end` (YYYY-MM-DD), "
                f"or run `airflow backfill create --dag-id {self.dag_id} --from-date ... --to-date ...` (or the "
                "UI's Backfill dialog) for a run per day")
        return {"start": str(self.start), "end": str(self.end)}


def run_identity(context: Any) -> str | None:
    """The run, as the batch's identity in the commits: Airflow's run_id, and how many times the run was
    cleared. A retry finds what an earlier try of the run committed; a cleared run (a day of an Airflow
    backfill run again with --reprocess-behavior, a run cleared in the UI) writes anew."""
    run_id = context.get("run_id")
    cleared = getattr(context.get("dag_run"), "clear_number", 0) or 0
    return f"{run_id}#cleared-{cleared}" if run_id and cleared else run_id


def _ms_since(started: float) -> float:
    return (time.monotonic() - started) * 1000


def _joined(ours: str, theirs: str | None) -> str:
    """A spark-submit list (--jars, --files, --py-files): ours, then the task's own."""
    return ",".join(filter(None, [ours, theirs]))
