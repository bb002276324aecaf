"""An upstream Hudi table's commits (`--source-kind hudi`): the FAQ's incremental processing, a derived
table fed by the changes another Hudi table committed since the derived table's checkpoint.

The changes are the upstream's change data (Hudi's CDC query, `hoodie.table.cdc.enabled` on the
upstream): inserts, updates and deletes, each with the row before and after. A run reads the writes
that completed after the checkpoint, up to the newest completed when it starts; the checkpoint is the
last completion time consumed, in hudi-ops' key (naming the upstream) and in HoodieStreamer's
`streamer.checkpoint.key.v2`, as its HoodieIncrSource keeps it. Hudi 1.1's CDC query selects commits by
their requested times, and two writers' commits may complete in another order than they began: so it
is asked for the range of the new writes' requested times, and only their changes are kept. A first
run (no checkpoint) reads the upstream's snapshot: its history may be archived or cleaned already.
Table services' commits (compaction, clustering) change no row and are no work. An upstream whose
cleaner removed file versions the changes need, or whose archiver moved commits after the checkpoint
out of its active timeline, fails the run naming both instants, never a silent gap; Hudi's
`hoodie.datasource.read.incr.fallback.fulltablescan.enable=true` reads the upstream's whole snapshot
instead (upserts only: rows deleted upstream since the checkpoint stay in the derived table).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.instant import Action, Instant
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.keys import DataSourceReadConfig, StreamerConfig, TableConfigKeys
from hudi_ops.read.pipeline_metadata import INGEST_CHECKPOINT_KEY, IngestCheckpoint, newest_extra_metadata
from hudi_ops.read.service_history import cleans
from hudi_ops.s3_settings import S3Settings
from hudi_ops.sources.kafka import STREAMER_CHECKPOINT_KEY_V2
from hudi_ops.storage import Storage

#: Hudi's own switch for reading the whole upstream when its changes since the checkpoint are gone
FULL_SCAN_FALLBACK = DataSourceReadConfig.INCR_FALLBACK_FULL_SCAN.name
#: HoodieStreamer's SQL transform: a query of `<SRC>`, the changes (hudi_ops.spark.sources.hudi_table)
TRANSFORMER_SQL = StreamerConfig.TRANSFORMER_SQL.name
_SERVICE_OPERATIONS = ("compact", "cluster", "log_compact")


def source_id(upstream: Storage) -> str:
    return f"hudi:{upstream.table_id}"


def falls_back_to_full_scan(options: Mapping[str, str]) -> bool:
    return options.get(FULL_SCAN_FALLBACK, "false").strip().lower() == "true"


@dataclass(frozen=True)
class UpstreamWork:
    upstream: str  # the upstream table's base path, as given
    source: str  # source_id()
    checkpoint: IngestCheckpoint | None  # the derived table's; its position is a completion time
    writes: tuple[Instant, ...]  # the upstream's data writes completed after it, oldest first
    #: read the upstream's snapshot: a first run, or the changes are gone and the options asked for it
    full_scan: bool = False

    @property
    def begin(self) -> str:
        """The checkpoint's completion time, or the start: what this run reads after."""
        return self.checkpoint.position if self.checkpoint else "0"

    @property
    def end(self) -> str:
        """The last completion time this run consumes (inclusive): the checkpoint after it."""
        return max(str(w.completion_time) for w in self.writes)

    @property
    def requested_range(self) -> tuple[str, str]:
        """(after, up to) the new writes' requested times, as Hudi's CDC query takes its range."""
        first = min(w.requested_time for w in self.writes)
        return str(int(first) - 1).zfill(len(first)), max(w.requested_time for w in self.writes)

    def commit_metadata(self) -> dict[str, str]:
        return {STREAMER_CHECKPOINT_KEY_V2: self.end}

    def ingest_checkpoint(self, run: str) -> IngestCheckpoint:
        return IngestCheckpoint("", self.source, self.end, run)

    def describe(self) -> str:
        since = f"since its completion time {self.begin}" if self.checkpoint else "(no ingest of it yet)"
        return f"{len(self.writes)} new commit(s) of upstream table {self.upstream} {since}"


def upstream_work(base_path: str, upstream_path: str, options: Mapping[str, str], *,
                  s3: S3Settings | None = None) -> UpstreamWork:
    """What the derived table at `base_path` has not taken from the upstream table; `s3`: how to reach
    tables on S3."""
    upstream_storage = Storage.for_uri(upstream_path, s3=s3)
    try:
        upstream = MetaClient.open(upstream_path, s3=s3)
    except TableNotFoundError:
        raise InvalidInputError(f"the upstream table {upstream_path} does not exist: fix the ingest's source path "
                                "(the upstream Hudi table's base path)") from None
    if upstream.properties.values.get(TableConfigKeys.CDC_ENABLED.name, "false").lower() != "true":
        raise InvalidInputError(f"the upstream table {upstream_path} keeps no change data (hoodie.table.cdc.enabled is "
                                "not true), so its deletes cannot be read: create it with CDC on, or feed the derived "
                                "table from the upstream's own source")
    source = source_id(upstream_storage)
    checkpoint = _checkpoint(base_path, source, s3)
    timeline = upstream.timeline()
    # only the writes after the checkpoint have their metadata read (an idle tick reads none)
    new = [i for i in timeline.completed_writes()
           if checkpoint is None or timeline.completion_time(i) > checkpoint.position]
    writes = tuple(sorted((i for i in new if not _is_service(timeline.commit_metadata(i).operation_type)),
                          key=timeline.completion_time))
    work = UpstreamWork(upstream_path, source, checkpoint, writes, full_scan=checkpoint is None)
    if not writes or checkpoint is None:
        return work
    gone = _gone(upstream, checkpoint, writes)
    if gone is None:
        return work
    if falls_back_to_full_scan(options):
        return UpstreamWork(upstream_path, source, checkpoint, writes, full_scan=True)
    raise InvalidInputError(
        f"the upstream table {upstream_path} no longer holds the changes after this table's checkpoint (completion "
        f"time {checkpoint.position}, commit {checkpoint.instant}): {gone}; nothing was written. Set "
        f"{FULL_SCAN_FALLBACK}=true to read the upstream's whole snapshot once (rows it deleted meanwhile stay here), "
        "and keep more of the upstream's history (its cleaner's and archiver's retention) than the derived table "
        "lags behind")


def _is_service(operation: str | None) -> bool:
    """A table service's commit (its operation, as Hudi's WriteOperationType names it), which changes no row."""
    return (operation or "").lower() in _SERVICE_OPERATIONS


def _checkpoint(base_path: str, source: str, s3: S3Settings | None) -> IngestCheckpoint | None:
    """The derived table's newest checkpoint of the upstream: hudi-ops' own, or HoodieIncrSource's (a
    completion time under HoodieStreamer's key; a Kafka checkpoint there names its topic)."""
    try:
        meta = MetaClient.open(base_path, s3=s3)
    except TableNotFoundError:
        return None
    for instant, extra in newest_extra_metadata(meta):
        own = IngestCheckpoint.parse(instant, extra.get(INGEST_CHECKPOINT_KEY, ""))
        if own is not None and own.source == source:
            return own
        if (value := extra.get(STREAMER_CHECKPOINT_KEY_V2, "")).isdigit():
            return IngestCheckpoint(instant, source, value)
    return None


def _gone(upstream: MetaClient, checkpoint: IngestCheckpoint, writes: tuple[Instant, ...]) -> str | None:
    """Why the upstream cannot give the changes after the checkpoint, naming the instants; None: it can."""
    archived = [a for a in upstream.archived_timeline() if a.action in Action.WRITE_ACTIONS and a.metadata
                and (a.completion_time or a.requested_time) > checkpoint.position
                and not _is_service(a.commit_metadata().operation_type)]
    if archived:
        oldest = min(archived, key=lambda a: a.completion_time or a.requested_time)
        return (f"its archiver moved commit {oldest.requested_time} (completed {oldest.completion_time}) and "
                f"{len(archived) - 1} more after the checkpoint out of its active timeline")
    last = cleans(upstream, latest=1)
    first = min(w.requested_time for w in writes)
    if last and last[0].earliest_commit_to_retain and first < last[0].earliest_commit_to_retain:
        return (f"its clean {last[0].instant} kept file versions from commit {last[0].earliest_commit_to_retain} on, "
                f"and the changes begin with commit {first}")
    return None
