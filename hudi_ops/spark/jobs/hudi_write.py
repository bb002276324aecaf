"""One write through Apache Hudi's Spark datasource, and the commit it made.

The job's own keys ride along as `_`-prefixed options, which Hudi copies into the commit's extra
metadata: the run's token finds the commit afterwards, whoever else committed meanwhile. Keys outside
that prefix (HoodieStreamer's checkpoints) go in through hudi-ops' DatasourceWrite
(hudi_ops/spark/java/write), the same write with a pre-commit step that adds them.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hudi_ops.errors import ConfigError, HudiOpsError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.keys import DataSourceWriteConfig
from hudi_ops.read.pipeline_metadata import COMMIT_METADATA_PREFIX, JOB_KEY, RUN_KEY
from hudi_ops.read.table_overview import CommitStats, commit_stats_of
from hudi_ops.spark.hudi_java import DATASOURCE_WRITE, hudi_loads
from hudi_ops.spark.java_errors import JavaFailure, JobContext, hudi_ops_error
from hudi_ops.spark.jobs.target import TargetTable
from hudi_ops.spark.session import session_options

OPERATION = DataSourceWriteConfig.OPERATION.name
COMMIT_METADATA_PREFIX_KEY = DataSourceWriteConfig.COMMIT_METADATA_PREFIX.name


def write_options(
    target: TargetTable, operation: str, options: Mapping[str, str], *, job: str, extra_metadata: Mapping[str, str]
) -> tuple[str, dict[str, str]]:
    """(the run's token, every option of the write): the caller's options, the table's settings, the
    operation and the commit's extra metadata."""
    prefix = options.get(COMMIT_METADATA_PREFIX_KEY, COMMIT_METADATA_PREFIX)
    if not JOB_KEY.startswith(prefix):
        raise ConfigError(f"{COMMIT_METADATA_PREFIX_KEY}={prefix!r} would keep hudi-ops' checkpoints out of the "
                          f"commit metadata; its keys start with {COMMIT_METADATA_PREFIX!r}: drop the setting")
    given = options.get(OPERATION)
    if given and given.lower() != operation.lower():
        raise ConfigError(f"--op {operation} and option {OPERATION}={given} disagree; give one")
    run = uuid.uuid4().hex
    return run, {**options, **target.hudi_options(), OPERATION: operation.lower(), JOB_KEY: job, RUN_KEY: run,
                 **extra_metadata}


@dataclass(frozen=True)
class Written:
    commit: CommitStats
    #: a failure after the commit had completed (Hudi's inline clean or rollback of others' failed
    #: writes): the write stands, the service runs again with the next writer
    after_commit: str | None = None


def write(spark: Any, frame: Any, target: TargetTable, options: Mapping[str, str], run: str, source: str, *,
          commit_metadata: Mapping[str, str] | None = None) -> Written:
    """Write `frame` with Hudi and return what the commit did; Hudi's failures become hudi-ops errors.
    `commit_metadata`: keys for the commit's extra metadata beyond the options' `_`-prefixed ones."""
    options = session_options(spark, options)
    try:
        _save(spark, frame, target.base_path, options, commit_metadata or {})
    except Exception as e:
        failure = JavaFailure.of(e)
        if failure is None:
            raise
        done = committed(target.base_path, run)
        if done is not None:
            return Written(done, after_commit=failure.summary)
        raise hudi_ops_error(failure, JobContext(target.base_path, target.record_key_fields, source)) from e
    done = committed(target.base_path, run)
    if done is None:
        raise HudiOpsError(f"Hudi reported success but no completed commit of {target.base_path} carries run {run}")
    return Written(done)


def _save(spark: Any, frame: Any, base_path: str, options: Mapping[str, str], commit_metadata: Mapping[str, str]
          ) -> None:
    if commit_metadata and hudi_loads(spark, DATASOURCE_WRITE.name):
        spark.sparkContext._jvm.hudiops.write.DatasourceWrite.save(frame._jdf, base_path, dict(options),
                                                                   dict(commit_metadata))
        return
    if commit_metadata:  # a Hudi of the user's own, without hudi-ops' classes: hudi-ops' own keys still hold
        # the checkpoint, only HoodieStreamer cannot resume from this commit
        print(f"hudi_ops.spark: warning: {DATASOURCE_WRITE.missing} ({', '.join(commit_metadata)}): pass every "
              "jar `python -m hudi_ops.jars hudi` prints", file=sys.stderr, flush=True)
    frame.write.format("hudi").options(**options).mode("append").save(base_path)


def committed(base_path: str, run: str) -> CommitStats | None:
    """The completed write that carries the run's token, if there is one."""
    try:
        timeline = MetaClient.open(base_path).timeline()
    except TableNotFoundError:  # a first write that failed before Hudi created the table
        return None
    for inst, metadata in timeline.newest_writes():
        if metadata.extra_metadata.get(RUN_KEY) == run:
            return commit_stats_of(timeline, inst)
    return None
