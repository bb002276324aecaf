"""What hudi-ops' jobs record in the extra metadata of the commits they make, and finding it again.

Hudi's Spark datasource copies every write option whose name starts with
`hoodie.datasource.write.commitmeta.key.prefix` (by default `_`) into the commit's extra metadata,
so the jobs pass these keys as options and the control plane reads them back from the timeline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient

COMMIT_METADATA_PREFIX = "_"
#: the job that made the commit (`ingest`, `backfill`, ...) and the run's own token
JOB_KEY = "_hudi_ops.job"
RUN_KEY = "_hudi_ops.run"
#: an ingest's checkpoint, JSON `{"source": <source folder URI>, "position": <newest file written>}`
#: (positions: hudi_ops.sources); one key for every ingest, told apart by source, so several
#: ingests of different sources into one table each keep their own
INGEST_CHECKPOINT_KEY = "_hudi_ops.ingest.checkpoint"
#: a backfill's checkpoint, the last day it committed: JSON `{"source", "start", "end", "run", "day"}`;
#: a retry of the run resumes after its day, a new run (or another source) starts the window afresh
BACKFILL_CHECKPOINT_KEY = "_hudi_ops.backfill.checkpoint"


def ingest_checkpoint(source: str, position: str) -> str:
    return json.dumps({"source": source, "position": position}, sort_keys=True)


def ingest_position(meta: MetaClient, source: str) -> str | None:
    """The position an ingest of `source` reached, None before its first commit."""
    found = latest_value(meta, INGEST_CHECKPOINT_KEY, lambda v: _checkpoint(v).get("source") == source)
    return _checkpoint(found).get("position") if found else None


def _checkpoint(value: str) -> dict[str, str]:
    try:
        parsed = json.loads(value) if value else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def backfill_checkpoint(source: str, start: str, end: str, run: str, day: str) -> str:
    return json.dumps({"source": source, "start": start, "end": end, "run": run, "day": day}, sort_keys=True)


def backfill_day(meta: MetaClient, source: str, start: str, end: str, run: str) -> str | None:
    """The last day a backfill run of the window committed, None before its first commit."""
    wanted = {"source": source, "start": start, "end": end, "run": run}
    found = latest_value(meta, BACKFILL_CHECKPOINT_KEY,
                         lambda v: {k: _checkpoint(v).get(k) for k in wanted} == wanted)
    return _checkpoint(found).get("day") if found else None


def pipeline_of(extra_metadata: Mapping[str, str]) -> str | None:
    """Which pipeline made a commit, as people name it: `ingest`, `backfill of 2026-11-20`; None for
    commits of other writers (table services, other tools)."""
    job = extra_metadata.get(JOB_KEY)
    day = _checkpoint(extra_metadata.get(BACKFILL_CHECKPOINT_KEY, "")).get("day")
    return f"backfill of {day}" if job == "backfill" and day else job


def latest_value(meta: MetaClient, key: str, accept: Callable[[str], bool] = bool) -> str | None:
    """The newest accepted value of `key` among completed writes, searching back by completion time
    past the commits of other writers (a backfill or a table service never moves an ingest's checkpoint),
    on into the archived timeline when the active one has none (a long backfill pushes an ingest's
    last commit out of it)."""
    for _, metadata in meta.timeline().newest_writes():
        value = metadata.extra_metadata.get(key)
        if value and accept(value):
            return value
    for archived in meta.archived_timeline():
        if archived.action in Action.WRITE_ACTIONS and archived.metadata:
            value = archived.commit_metadata().extra_metadata.get(key)
            if value and accept(value):
                return value
    return None
