"""OpenLineage for hudi-ops' operators: what each task read and wrote, as Airflow's OpenLineage provider
reports it (the operators' `get_openlineage_facets_on_*`; nothing runs without that provider).

Hudi's own Spark lineage names little (its relations hide the table: apache/hudi#18298), while a
hudi-ops task knows its datasets exactly:
- inputs: a writer's source folder; a table service's table (a compaction or a clustering reads the
  table and writes it);
- the output: the table, with its schema (the latest commit's, read without a JVM), Hudi's commit as
  the dataset's version, and the commit's rows, bytes and files as output statistics;
- a run facet `hudi` naming the job, its operation and outcome, and for a write conflict the instant
  that committed first.
Datasets are named by OpenLineage's naming spec: a local path is namespace `file` and its absolute
path, an S3 object `s3://<bucket>` and its key, an HDFS path `hdfs://<host>:<port>` and its path.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import attrs
from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.facet_v2 import RunFacet, schema_dataset
from openlineage.client.facet_v2 import dataset_version_dataset as version_facet
from openlineage.client.facet_v2 import output_statistics_output_dataset as statistics_facet

from hudi_ops.errors import HudiOpsError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.s3_settings import S3Settings
from hudi_ops.storage import S3_SCHEMES

#: a write conflict's message names the instant that committed first (hudi_ops.errors.WriteConflictError)
_CONFLICT = re.compile(r"overlaps instant (\d{17})")


@attrs.define
class HudiRunFacet(RunFacet):
    """What the Hudi job of the run did: `job` (ingest, compact, ...), Hudi's `operation`, its `outcome`
    (committed, completed, skipped, failed, ...), the `instant` it made; a failure's hudi-ops `error` and
    its message as the `reason` (a pre-commit validator's refusal names the validator and its query), and
    for a write conflict the instant that committed first (`conflictingInstant`)."""

    job: str
    operation: str | None = None
    outcome: str | None = None
    instant: str | None = None
    reason: str | None = None  # why a run did nothing, or failed
    error: str | None = None
    exitCode: int | None = None  # OpenLineage names fields in camelCase
    conflictingInstant: str | None = None


def dataset_name(uri: str) -> tuple[str, str]:
    """(namespace, name) of a path or URI by OpenLineage's naming spec; one folder has one name however
    it is spelled (a trailing slash, `file://`, an escaped character)."""
    if "://" not in uri:
        return "file", os.path.normpath(os.path.abspath(uri))
    parts = urlsplit(uri)
    path = posixpath.normpath(unquote(parts.path) or "/")
    if parts.scheme in S3_SCHEMES:
        return f"s3://{parts.netloc}", path.lstrip("/")
    if parts.scheme == "kafka":  # a topic: its name alone, in its first broker's namespace
        return f"kafka://{parts.netloc}", path.lstrip("/")
    if parts.scheme == "file":
        return "file", path
    return f"{parts.scheme}://{parts.netloc}", path


def lineage(*, job: str, table: str, sources: tuple[str, ...], result: Mapping[str, Any] | None = None,
            failure: Any = None, skipped: str | None = None, s3: S3Settings | None = None,
            with_facets: bool = True) -> Any:
    """The task's `OperatorLineage`: `sources` read (a writer's), `table` written (and read by a service);
    `result` is the job's final line (None: it has not run, or wrote none), `failure` its JobFailure,
    `skipped` why the task found no work; `with_facets`: the table's schema too (not at the task's start)."""
    from airflow.providers.openlineage.extractors import OperatorLineage

    inputs = [InputDataset(*dataset_name(uri)) for uri in sources or (table,)]
    output_facets: dict[str, Any] = {}
    facets: dict[str, Any] = {}
    if with_facets:
        facets.update(_schema_facets(table, s3))
    if result and result.get("instant"):
        facets["version"] = version_facet.DatasetVersionDatasetFacet(datasetVersion=result["instant"])
        output_facets["outputStatistics"] = statistics_facet.OutputStatisticsOutputDatasetFacet(
            rowCount=result.get("rows"), size=result.get("bytes"), fileCount=result.get("files"))
    output = OutputDataset(*dataset_name(table), outputFacets=output_facets, facets=facets)
    run = _run_facet(job, result, failure, skipped)
    # a run that found no work read its source's listing, not its data, and wrote nothing
    return OperatorLineage(inputs=[] if skipped else inputs, outputs=[] if skipped else [output],
                           run_facets={"hudi": run} if run else {})


def _schema_facets(table: str, s3: S3Settings | None) -> dict[str, Any]:
    try:
        schema = MetaClient.open(table, s3=s3).table_schema()
    except (HudiOpsError, OSError):  # not a table yet, or unreadable just now: lineage never fails a task
        return {}
    if schema is None:
        return {}
    fields = [schema_dataset.SchemaDatasetFacetFields(name=f.name, type=str(f.type)) for f in schema]
    return {"schema": schema_dataset.SchemaDatasetFacet(fields=fields)}


def _run_facet(job: str, result: Mapping[str, Any] | None, failure: Any, skipped: str | None) -> HudiRunFacet | None:
    if skipped is not None:
        return HudiRunFacet(job=job, outcome="skipped", reason=skipped)
    if failure is not None:
        conflict = _CONFLICT.search(failure.message or "")
        return HudiRunFacet(job=job, outcome="failed", exitCode=failure.exit_code, error=failure.error,
                            reason=failure.message, conflictingInstant=conflict.group(1) if conflict else None)
    if result is None:
        return None
    return HudiRunFacet(job=job, operation=result.get("operation") or result.get("mode"),
                        outcome=result.get("outcome"), instant=result.get("instant"), reason=result.get("reason"))
