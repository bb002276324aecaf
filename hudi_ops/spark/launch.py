"""How a hudi-ops job's driver starts, whoever starts it: the operators (through the Spark provider's
spark-submit), the tests and benchmarks (`spark_submit_command`) and a job run without spark-submit
(`python -m hudi_ops.spark`, whose local session takes `job_launch()`'s jars and settings).

One recipe, `job_launch()`: Hudi's jars and those the job's storage (s3a) and source (Spark's Kafka reader)
need; Hudi's session settings, then s3a's, then the driver JVM's (client mode: hudi_ops.spark.driver_jvm),
then the user's and the cluster's, each over the ones before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hudi_ops.s3_settings import S3Settings
from hudi_ops.spark import driver_jvm
from hudi_ops.spark.hudi_bundle import hudi_jars
from hudi_ops.spark.jobs_python import JobsPython
from hudi_ops.spark.s3a import s3a_conf, s3a_jars

#: What Hudi's quick start sets on every session: the `CALL` procedures need the extension.
HUDI_SESSION_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
}
#: a driver that talks to no one but itself (local mode, tests, the demo): nothing on other interfaces,
#: and no web UI (it would listen on all of them)
LOOPBACK_CONF = {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1", "spark.ui.enabled": "false"}
#: the spark-submit application
APPLICATION = str(Path(__file__).parent / "__main__.py")


@dataclass(frozen=True)
class Launch:
    """A job's jars (comma-joined by spark-submit's `--jars`) and Spark settings (`--conf`)."""

    jars: tuple[str, ...]
    conf: dict[str, str]


def job_launch(conf: Mapping[str, str] | None = None, *, jars: Sequence[str] = (), s3: S3Settings | None = None,
               client_mode: bool = True, large: bool = False, jobs: JobsPython | None = None) -> Launch:
    """The launch of a job whose own settings are `conf` and that needs `jars` besides Hudi's (and s3a's, for a
    table on `s3`). In client mode the driver's JVM is this machine's and takes hudi-ops' settings for it (a
    `large` run's, for throughput; `jobs`: the interpreter whose PySpark runs the driver); in cluster mode they
    are the cluster's to choose."""
    driver = driver_jvm.driver_conf(large=large, jobs=jobs) if client_mode else {}
    return Launch(jars=(*hudi_jars(), *(s3a_jars() if s3 else ()), *jars),
                  conf={**HUDI_SESSION_CONF, **(s3a_conf(s3) if s3 else {}), **driver, **(conf or {})})


def spark_submit_command(
    job_args: Sequence[str], *, master: str = "local[2]", conf: Mapping[str, str] | None = None,
    spark_submit: str = "spark-submit", application: str = APPLICATION, jars: Sequence[str] = (),
    s3: S3Settings | None = None,
) -> list[str]:
    """A job's spark-submit command in client mode, as the operators launch it."""
    launch = job_launch(conf, jars=jars, s3=s3)
    command = [spark_submit, "--master", master, "--jars", ",".join(launch.jars)]
    for key, value in launch.conf.items():
        command += ["--conf", f"{key}={value}"]
    return [*command, application, *job_args]
