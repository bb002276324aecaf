"""The spark-submit command line of a hudi-ops job: the application, Hudi's jars and session settings.

The Airflow operators build theirs through the Spark provider from the same pieces; benchmarks and
tests that start jobs as separate processes use `spark_submit_command`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from hudi_ops.spark import driver_jvm
from hudi_ops.spark.hudi_bundle import hudi_jars
from hudi_ops.spark.session import HUDI_SESSION_CONF

APPLICATION = str(Path(__file__).parent / "__main__.py")


def spark_submit_command(
    job_args: Sequence[str], *, master: str = "local[2]", conf: Mapping[str, str] | None = None,
    spark_submit: str = "spark-submit", application: str = APPLICATION, jars: Sequence[str] = (),
) -> list[str]:
    """`jars`: more than Hudi's, e.g. the s3a connector's; `conf` over hudi-ops' driver JVM options."""
    command = [spark_submit, "--master", master, "--jars", ",".join([*hudi_jars(), *jars])]
    for key, value in {**HUDI_SESSION_CONF, **driver_jvm.driver_conf(), **(conf or {})}.items():
        command += ["--conf", f"{key}={value}"]
    return [*command, application, *job_args]
