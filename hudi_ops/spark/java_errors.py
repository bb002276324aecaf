"""Apache Hudi's (and Spark's) Java failures, as the hudi-ops errors they stand for, hence exit codes.

PySpark hands most Java failures over as a Py4JJavaError (`java_exception`), and converts a few of
Spark's own (AnalysisException, IllegalArgumentException...) into pyspark.errors classes that keep
the Java one as `_origin`. The class that says what happened sits somewhere on the cause chain: a
failure inside a task arrives wrapped in Spark's SparkException, with the executor's exception as
its cause in local mode but only as text in the message on a cluster. So the chain's classes are
matched first, then the class names in its text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hudi_ops.errors import (
    ClusteringUpdateConflictError,
    ConcurrentJobError,
    ConfigError,
    EarlyConflictError,
    HudiOpsError,
    InvalidInputError,
    LockAcquisitionError,
    RollbackRaceError,
    SourceUnavailableError,
    TableNotFoundError,
    ValidationFailedError,
    WriteConflictError,
    WriteInFlightError,
)
from hudi_ops.format.file_group import FileGroupId
from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.metadata_table import MDT_TIMELINE, METADATA_FOLDER
from hudi_ops.format.timeline import Timeline
from hudi_ops.read.pending_plans import pending_plans
from hudi_ops.storage import Storage

_HUDI_EXCEPTION = "org.apache.hudi.exception."


@dataclass(frozen=True)
class JavaFailure:
    """A Java exception and its causes, outermost first, as (class name, message) pairs."""

    chain: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, error: BaseException) -> JavaFailure | None:
        """The Java side of a PySpark error, or None for a Python error."""
        java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
        if java is None:
            return None
        chain, seen = [], set()
        while java is not None and len(chain) < 32:
            key = java.hashCode()
            if key in seen:  # a cause cycle, which Java allows
                break
            seen.add(key)
            chain.append((java.getClass().getName(), str(java.getMessage() or "")))
            java = java.getCause()
        return cls(tuple(chain))

    def find(self, *class_names: str) -> str | None:
        """The message of the first exception on the chain of one of the classes (matched by name,
        also in the text of wrapped task failures); None when none is there."""
        for name, message in self.chain:
            if name in class_names:
                return message
        for _, message in self.chain:
            for name in class_names:
                at = message.find(name + ": ")
                if at >= 0:
                    return message[at + len(name) + 2:].split("\n\tat ", 1)[0]
        return None

    @property
    def summary(self) -> str:
        name, message = self.chain[-1] if self.chain else ("", "")
        outer = self.chain[0][0] if self.chain else ""
        first_line = message.strip().splitlines()[0] if message.strip() else ""
        return f"{name}: {first_line[:400]}" + (f" (in {outer})" if outer != name else "")


_INSTANT = re.compile(r"instantTime=(\d+)")
#: `HoodieFileGroupId(partitionPath=p, fileId=f)` in Hudi 1.2, `HoodieFileGroupId{partitionPath='p', fileId='f'}` in 1.1
_FILE_GROUP = re.compile(r"HoodieFileGroupId[({]partitionPath='?([^,']*)'?, fileId='?([^)}']+)'?[)}]")
_KEY_FIELD = re.compile(r'for field:\s*"?([^"\s]+)"?')
_UNREADABLE_FILE = re.compile(r"(?:reading file|Could not read footer for file:?|is not a Parquet file)\s*:?\s*(\S+)")


def _conflict(message: str, _: JobContext) -> HudiOpsError:
    instants = _INSTANT.findall(message)  # Hudi names ours first, then the one that committed
    ours = instants[0] if instants else "?"
    theirs = instants[1] if len(instants) > 1 else "?"
    said = message.strip().splitlines()[0].rsplit("Exception: ", 1)[-1].split(" between ", 1)[0]
    return WriteConflictError(ours, theirs, reason=f"Hudi: {said[:200]}")


def _clustering_update(message: str, context: JobContext) -> HudiOpsError:
    found = _FILE_GROUP.search(message)
    if found is None:
        return ClusteringUpdateConflictError("?", None)
    group = FileGroupId(found.group(1), found.group(2))
    try:
        plans = pending_plans(MetaClient.open(context.base_path).timeline(), Action.CLUSTERING)
    except HudiOpsError:  # the message matters more than the plan's name
        plans = ()
    plan = next((p.instant for p in plans if group in p.file_groups), None)
    return ClusteringUpdateConflictError(str(group), plan)


#: Hudi 1.2's refusal to execute a plan whose last executor's heartbeat has not expired (PR #18012)
_PLAN_HEARTBEAT = re.compile(r"Cannot execute instant (\S+) due to heartbeat by concurrent writer")


def _lock(message: str, _: JobContext) -> HudiOpsError:
    busy = _PLAN_HEARTBEAT.search(message)
    if busy:  # a HoodieLockException too, but the lock was taken: the plan is another job's for now
        return ConcurrentJobError(
            f"Hudi refused to execute plan {busy.group(1)}: its last executor's heartbeat has not expired yet "
            "(hoodie.client.heartbeat.interval_in_ms x hoodie.client.heartbeat.tolerable.misses), so another "
            "job may still be running it; nothing was written: retry after that time")
    return LockAcquisitionError(
        f"the table lock was not acquired ({message.strip()[:300]}); another writer or a table service held it "
        "for longer than hoodie.write.lock.wait_time_ms: retry, or raise that wait"
    )


#: what Hudi's rollback says when another process rolled the same instant back first: it found no
#: rollback left to run, or failed to delete an instant file (`[==>20261123231635613__commit__INFLIGHT]`)
#: of a write that is gone from the timeline (still pending: the storage refused the delete; completed:
#: something else went wrong, and a completed write is never rolled back by a clean)
_NOTHING_LEFT = "No pending rollback instants found"
_UNDELETED = re.compile(r"Could not delete instant \[(?:==>)?(\d+)__(?:commit|deltacommit|replacecommit)__")


def _rollback(message: str, context: JobContext, failure: JavaFailure) -> HudiOpsError | None:
    text = "\n".join(m for _, m in failure.chain)
    undeleted = _UNDELETED.search(text)
    if undeleted:
        try:
            timeline = MetaClient.open(context.base_path).timeline()
        except HudiOpsError:
            return None
        if any(i.requested_time == undeleted.group(1) for i in timeline):
            return None
    elif _NOTHING_LEFT not in text:
        return None
    return RollbackRaceError(
        f"another process rolled back the same failed write of {context.base_path} at the same time "
        f"({message.strip().splitlines()[0][:200]}); nothing is lost. hudi-ops' clean and rollback-failed "
        "jobs take turns; a writer's inline clean (hoodie.clean.automatic) does not, so leave cleaning to the "
        "services DAG when several pipelines write the table")


#: an instant file of the active timeline that a job listed and then could not open
#: a timeline file: `<requested>_<completed>.<action>` once completed, `<requested>.<action>.<state>` pending
_MISSING_INSTANT = re.compile(r"File \S*/\.hoodie/timeline/(\d+)(_\d+)?\.\w+(?:\.\w+)? does not exist")


def _left_the_timeline_under_the_job(failure: JavaFailure, context: JobContext) -> HudiOpsError | None:
    """An instant file the job had listed is gone when it reads it, and the instant with it: another job
    archived it (Hudi reads every completed commit's metadata when it builds a file-group reader,
    `TableSchemaResolver.getTableInternalSchemaFromCommitMetadata`), or rolled back a pending plan
    (a clustering that yielded to a writer withdraws its plan, while writers read every pending
    clustering plan, `ClusteringUtils.getAllFileGroupsInPendingClusteringPlans`). Nothing of the job
    is visible."""
    missing = _MISSING_INSTANT.search(failure.find("java.io.FileNotFoundException") or "")
    if missing is None:
        return None
    try:
        timeline = MetaClient.open(context.base_path).timeline()
    except HudiOpsError:
        return None
    instant = missing.group(1)
    if any(i.requested_time == instant for i in timeline):  # still there: the storage lost it
        return None
    if missing.group(2):  # a completed instant's file
        return ConcurrentJobError(
            f"another job archived instant {instant} of {context.base_path} while this job read the timeline "
            "(Hudi reads every completed commit's metadata when it starts reading file groups); nothing of this "
            "job is visible: retry")
    return ConcurrentJobError(
        f"another job rolled back pending instant {instant} of {context.base_path} while this job read it (a "
        "clustering that yields to a writer withdraws its plan, a clean rolls back failed writes); nothing of "
        "this job is visible: retry")


#: a metadata-table log file that a job's metadata reader listed and then could not open
_MISSING_METADATA_LOG = re.compile(r"File \S*/\.hoodie/metadata/[^/\s]+/\.[^/\s]+?_(\d+)\.log\.\S* does not exist")


def _rolled_back_under_the_job(failure: JavaFailure, context: JobContext) -> HudiOpsError | None:
    """Hudi's metadata reader lists a metadata-table file group's logs, then opens them; a concurrent
    rollback of a failed write deletes that write's metadata-table log in between (found by a chaos
    run, in `HoodieBackedTableMetadata.readFilesIndexRecords` under a backfill). Nothing of the job is
    visible: it had not committed."""
    missing = _MISSING_METADATA_LOG.search(failure.find("java.io.FileNotFoundException") or "")
    if missing is None:
        return None
    try:
        mdt = Storage.for_uri(context.base_path).child(METADATA_FOLDER)
        timeline = Timeline.load(mdt, MDT_TIMELINE, layout_version=2)
    except HudiOpsError:
        return None
    if timeline.completed_instant(missing.group(1)) is not None:  # still committed: the storage lost it
        return None
    return ConcurrentJobError(
        f"another job rolled back metadata-table deltacommit {missing.group(1)} of {context.base_path} while "
        "this job read the metadata table (Hudi lists its log files, then opens them); nothing of this job "
        "is visible: retry")


def _bad_key(message: str, context: JobContext) -> HudiOpsError:
    found = _KEY_FIELD.search(message)
    field = found.group(1) if found else ", ".join(context.record_key_fields) or "the record key"
    return InvalidInputError(
        f"record key field {field!r} is null or empty in some input rows, and Hudi refuses such records "
        f"({message.strip()[:200]}); drop or fill those rows, then re-run"
    )


def _bad_schema(message: str, _: JobContext) -> HudiOpsError:
    return InvalidInputError(
        f"the input's schema is not one the table can take: {message.strip()[:500]}; "
        "cast the source's columns to the table's types, or write to a new table"
    )


def _broker_gone(message: str, context: JobContext) -> HudiOpsError:
    first = message.strip().splitlines()[0] if message.strip() else "no answer"
    return SourceUnavailableError(f"the Kafka broker stopped answering while the job read {context.source or 'it'}: "
                                  f"{first}; nothing was committed: retried")


def _no_table(message: str, context: JobContext) -> HudiOpsError:
    if Storage.for_uri(context.base_path).is_dir(".hoodie"):  # .hoodie/ without hoodie.properties yet
        return ConcurrentJobError(f"another writer is creating the table at {context.base_path} (its .hoodie/ is "
                                  "there, its hoodie.properties not yet); nothing was written: retry. If it "
                                  "persists, a first writer died while creating it: with a ZooKeeper lock the next "
                                  "writer clears it; without one, remove that .hoodie/ folder")
    return TableNotFoundError(context.base_path)


def _config_conflict(message: str, _: JobContext) -> HudiOpsError:
    return ConfigError(f"the job's settings contradict the table's: {message.strip()[:500]}; "
                       "use the table's values (see .hoodie/hoodie.properties), or write to a new table")


def _unreadable(message: str, context: JobContext) -> HudiOpsError:
    found = _UNREADABLE_FILE.search(message)
    path = found.group(1).rstrip(".") if found else ""
    first = message.strip().splitlines()[0][:300]
    if not context.source or context.source.rstrip("/") not in path:  # a table file, gone or broken: not input
        return HudiOpsError(f"the Spark job failed reading {path or 'a file'}: {first}")
    return InvalidInputError(f"Spark cannot read the source file {path} ({first}); fix or remove the file, "
                             "then re-run")


def _refused(message: str, _: JobContext) -> HudiOpsError:
    said = message.strip().splitlines()[0] if message.strip() else "a validator refused it"
    return ValidationFailedError(f"Hudi's pre-commit validation refused the batch, so nothing of it was committed: "
                                 f"{said[:600]}; correct the source data, or the validator's query (the table's "
                                 "`validators:` in the tables config)")


def _fence_lost(message: str, context: JobContext) -> HudiOpsError:
    return ConcurrentJobError(f"{message.strip().splitlines()[0]}: another attempt of this batch may be writing it "
                              f"to {context.base_path}; nothing of this one is visible, and its retry finds what "
                              "the other committed")


def _schema_changed(message: str, context: JobContext) -> HudiOpsError:
    """Hudi's check at commit that no concurrent commit changed the table's schema since this write began
    (a new column, or a first commit beside this one): the write is aborted; its retry reads the table's
    schema as it is now."""
    return ConcurrentJobError(f"a concurrent commit changed the schema of {context.base_path} while this write was "
                              f"under way (Hudi: {message.strip().splitlines()[0][:300] if message.strip() else ''}); "
                              "nothing of this write is visible, and its retry writes with the table's schema")


@dataclass(frozen=True)
class JobContext:
    """What a message needs that the Java error may not say."""

    base_path: str
    record_key_fields: Sequence[str] = ()
    source: str = ""  # the source folder as the job read it: only its files' failures are bad input


_KAFKA_ERRORS = "org.apache.kafka.common.errors."
#: Java classes, most specific first, and the hudi-ops error each becomes.
_RULES: tuple[tuple[tuple[str, ...], Callable[[str, JobContext], HudiOpsError]], ...] = (
    ((_HUDI_EXCEPTION + "HoodieEarlyConflictDetectionException",),
     lambda message, _: EarlyConflictError(message.strip().splitlines()[0] if message.strip() else "")),
    ((_HUDI_EXCEPTION + "HoodieWriteConflictException",), _conflict),
    ((_HUDI_EXCEPTION + "HoodieClusteringUpdateException",), _clustering_update),
    ((_HUDI_EXCEPTION + "HoodieSchemaEvolutionConflictException",), _schema_changed),
    (("hudiops.fence.FenceLostException",), _fence_lost),
    # hudi-ops' validators name the validator and query; Hudi's own say only that one refused
    (("hudiops.validate.PreCommitValidationFailed", _HUDI_EXCEPTION + "HoodieValidationException"), _refused),
    ((_HUDI_EXCEPTION + "HoodieLockException",), _lock),
    ((_HUDI_EXCEPTION + "HoodieKeyException", _HUDI_EXCEPTION + "HoodieKeyGeneratorException"), _bad_key),
    ((_HUDI_EXCEPTION + "SchemaCompatibilityException", _HUDI_EXCEPTION + "HoodieSchemaException",
      _HUDI_EXCEPTION + "HoodieNullSchemaTypeException", _HUDI_EXCEPTION + "MissingSchemaFieldException",
      _HUDI_EXCEPTION + "SchemaBackwardsCompatibilityException", "org.apache.avro.AvroTypeException"), _bad_schema),
    ((_HUDI_EXCEPTION + "TableNotFoundException",), _no_table),
    (("org.apache.spark.SparkFileNotFoundException", "org.apache.parquet.io.ParquetDecodingException"),
     _unreadable),
    # Spark's Kafka reader, with its broker gone for longer than the client waits
    ((_KAFKA_ERRORS + "TimeoutException", _KAFKA_ERRORS + "DisconnectException",
      _KAFKA_ERRORS + "NetworkException"), _broker_gone),
)


_CLUSTERING_COMMIT = re.compile(r"unable to transition clustering inflight to complete: (\d+)")
#: Hudi 1.1.1's `PreferWriterConflictResolutionStrategy.getCandidateInstantsForTableServicesCommits`
#: sorting in-flight writes (no completion time) by completion time: met with a Hudi of the user's own
#: (`HUDI_OPS_HUDI_JARS`); hudi-ops' own 1.1.1 runs the fixed check (hudi_ops.spark.hudi_java)
_UNORDERABLE = 'because the return value of "java.util.function.Function.apply(Object)" is null'


def _writes_in_flight(failure: JavaFailure, context: JobContext) -> HudiOpsError | None:
    """A clustering's commit that Hudi 1.1.1's prefer-writer check failed on: only a write in flight has
    no completion time, so the failure itself says one was there (the timeline, read later, names
    those still pending)."""
    committing = _CLUSTERING_COMMIT.search(failure.find(_HUDI_EXCEPTION + "HoodieClusteringException") or "")
    if committing is None or _UNORDERABLE not in (failure.find("java.lang.NullPointerException") or ""):
        return None
    try:
        timeline = MetaClient.open(context.base_path).timeline()
        clusterings = {p.instant for p in pending_plans(timeline, Action.CLUSTERING)}
        writes = tuple(i.requested_time for i in timeline.pending
                       if i.action in Action.WRITE_ACTIONS and i.requested_time not in clusterings)
    except HudiOpsError:
        writes = ()
    return WriteInFlightError(committing.group(1), writes)


def hudi_ops_error(failure: JavaFailure, context: JobContext) -> HudiOpsError:
    """The hudi-ops error for a Java failure: a known class's error, else a plain one (exit 1)."""
    rollback = failure.find(_HUDI_EXCEPTION + "HoodieRollbackException")
    if rollback is not None and (raced := _rollback(rollback, context, failure)) is not None:
        return raced
    if (gone := _left_the_timeline_under_the_job(failure, context)) is not None:
        return gone
    if (rolled_back := _rolled_back_under_the_job(failure, context)) is not None:
        return rolled_back
    if (in_flight := _writes_in_flight(failure, context)) is not None:
        return in_flight
    for classes, make in _RULES:
        message = failure.find(*classes)
        if message is not None:
            return make(message, context)
    text = "\n".join(message for _, message in failure.chain)
    if "Config conflict" in text:
        return _config_conflict(text[text.find("Config conflict"):], context)
    if _UNREADABLE_FILE.search(text) and ("FAILED_READ_FILE" in text or "not a Parquet file" in text):
        return _unreadable(text[_UNREADABLE_FILE.search(text).start():], context)  # type: ignore[union-attr]
    return HudiOpsError(f"the Spark job failed: {failure.summary}")
