"""What hudi-ops' jobs record in the extra metadata of the commits they make, and finding it again.

Hudi's Spark datasource copies every write option whose name starts with
`hoodie.datasource.write.commitmeta.key.prefix` (by default `_`) into the commit's extra metadata,
so the jobs pass these keys as options and the control plane reads them back from the timeline,
active and archived. Each commit names its batch there: an ingest the files it took, a backfill the
day and the run, so that a second attempt of a batch finds it committed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient

COMMIT_METADATA_PREFIX = "_"
#: the job that made the commit (`ingest`, `backfill`, ...) and the run's own token
JOB_KEY = "_hudi_ops.job"
RUN_KEY = "_hudi_ops.run"
#: an ingest's checkpoint and batch, JSON (IngestCheckpoint); one key for every ingest, told apart by
#: source, so several ingests of different sources into one table each keep their own
INGEST_CHECKPOINT_KEY = "_hudi_ops.ingest.checkpoint"
#: a backfill's checkpoint, the day it committed: JSON `{"source", "start", "end", "run", "day"}`;
#: a retry of the run resumes after its day, a new run (or another source) starts the window afresh
BACKFILL_CHECKPOINT_KEY = "_hudi_ops.backfill.checkpoint"


@dataclass(frozen=True)
class IngestCheckpoint:
    """What an ingest commit recorded for its source: its batch, and the source's state after it."""

    instant: str  # the commit that recorded it
    source: str  # the source folder (`Storage.table_id`)
    position: str  # the newest position ingested so far (hudi_ops.sources.files)
    run: str = ""  # the run that committed it (Airflow's run_id), "" outside Airflow
    #: the files this commit took, path -> size; None in checkpoints older than the names (everything
    #: at or before their position was ingested)
    files: Mapping[str, int] | None = None
    #: how many source files at or before the position were ingested, as the commit listed them, and
    #: their digest (hudi_ops.sources.files.files_digest): a listing that matches both holds no late file
    ingested: int | None = None
    digest: str | None = None

    def to_json(self) -> str:
        return json.dumps({"source": self.source, "position": self.position, "run": self.run,
                           "files": dict(self.files or {}), "ingested": self.ingested, "digest": self.digest},
                          sort_keys=True, separators=(",", ":"))

    @classmethod
    def parse(cls, instant: str, value: str) -> IngestCheckpoint | None:
        data = _json_object(value)
        source, position = data.get("source"), data.get("position")
        if not isinstance(source, str) or not isinstance(position, str):
            return None
        files = data.get("files")
        if isinstance(files, dict) and not all(isinstance(v, int) for v in files.values()):
            return None  # not ours: another tool's value under the key
        ingested, digest = data.get("ingested"), data.get("digest")
        return cls(instant, source, position, str(data.get("run") or ""),
                   {str(k): v for k, v in files.items()} if isinstance(files, dict) else None,
                   ingested if isinstance(ingested, int) else None, digest if isinstance(digest, str) else None)


def ingest_checkpoints(meta: MetaClient, source: str, *, archived: bool = True) -> Iterator[IngestCheckpoint]:
    """The ingest checkpoints of `source`, newest first, on into the archived timeline unless told not to."""
    for instant, value in extra_metadata_values(meta, INGEST_CHECKPOINT_KEY, archived=archived):
        checkpoint = IngestCheckpoint.parse(instant, value)
        if checkpoint is not None and checkpoint.source == source:
            yield checkpoint


def _json_object(value: str) -> dict[str, object]:
    try:
        parsed = json.loads(value) if value else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def backfill_checkpoint(source: str, start: str, end: str, run: str, day: str) -> str:
    return json.dumps({"source": source, "start": start, "end": end, "run": run, "day": day}, sort_keys=True)


def backfill_days(meta: MetaClient, source: str, start: str, end: str, run: str, *,
                  archived: bool = True) -> dict[str, str]:
    """The days a backfill run of the window committed, each with its commit."""
    wanted = {"source": source, "start": start, "end": end, "run": run}
    days: dict[str, str] = {}
    for instant, value in extra_metadata_values(meta, BACKFILL_CHECKPOINT_KEY, archived=archived):
        checkpoint = _json_object(value)
        if {k: checkpoint.get(k) for k in wanted} == wanted and isinstance(day := checkpoint.get("day"), str):
            days.setdefault(day, instant)
    return days


def pipeline_of(extra_metadata: Mapping[str, str]) -> str | None:
    """Which pipeline made a commit, as people name it: `ingest`, `backfill of 2026-11-20`; None for
    commits of other writers (table services, other tools)."""
    job = extra_metadata.get(JOB_KEY)
    day = _json_object(extra_metadata.get(BACKFILL_CHECKPOINT_KEY, "")).get("day")
    return f"backfill of {day}" if job == "backfill" and day else job


def extra_metadata_values(meta: MetaClient, key: str, *, archived: bool = True) -> Iterator[tuple[str, str]]:
    """(instant, value) of `key` in completed writes, the latest completed first, past the commits of
    other writers (a backfill or a table service never moves an ingest's checkpoint), on into the
    archived timeline (a long backfill pushes an ingest's last commit out of the active one)."""
    for instant, extra in newest_extra_metadata(meta, archived=archived):
        if value := extra.get(key):
            yield instant, value


def newest_extra_metadata(meta: MetaClient, *, archived: bool = True) -> Iterator[tuple[str, Mapping[str, str]]]:
    """(instant, extra metadata) of every completed write, the latest completed first, on into the
    archived timeline unless told not to."""
    for inst, metadata in meta.timeline().newest_writes():
        yield inst.requested_time, metadata.extra_metadata
    if not archived:
        return
    for old in meta.archived_timeline():
        if old.action in Action.WRITE_ACTIONS and old.metadata:
            yield old.requested_time, old.commit_metadata().extra_metadata
