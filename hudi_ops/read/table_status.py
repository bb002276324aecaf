"""A table in one line, as a fleet's operator scans many: how fresh, its last commit, the writes that
failed lately, what a read merges and which services wait. One look at the table (hudi_ops.read.table_need's),
plus its rollbacks: no JVM, a few small files per table.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from hudi_ops.format.instant import Action, instant_moment
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.read.heartbeats import failed_writes, starting_writes
from hudi_ops.read.pending_plans import pending_cleans
from hudi_ops.read.pipeline_metadata import pipeline_of
from hudi_ops.read.table_need import TableNeed, measure
from hudi_ops.read.table_overview import ROLLED_BACK, instant_spans
from hudi_ops.s3_settings import S3Settings

#: how far back failed writes are counted
RECENT = dt.timedelta(days=1)


@dataclass(frozen=True)
class TableStatus:
    need: TableNeed
    last_commit: dt.datetime | None  # the latest completed write's completion
    last_commit_by: str | None  # its pipeline (`ingest`, `backfill of 2026-11-20`), None for other writers
    failed_writes: int  # writes requested within RECENT that never committed: conflicts (exit 3), kills
    pending_cleans: int

    @classmethod
    def load(cls, base_path: str, options: Mapping[str, str], *, now: dt.datetime,
             s3: S3Settings | None = None) -> TableStatus:
        """`options`: the table's hoodie.* options (its writers' heartbeats: when a pending write is dead)."""
        meta = MetaClient.open(base_path, s3=s3)
        timeline = meta.timeline()
        need = measure(meta, {}, now=now, freshness=True)
        last = next(timeline.newest_writes(), None)
        since = now - RECENT
        local = meta.properties.timeline_timezone == "LOCAL"
        rolled_back = sum(1 for s in instant_spans(timeline, meta.commit_action)
                          if s.status == ROLLED_BACK and s.action in Action.WRITE_ACTIONS
                          and instant_moment(s.requested_time, local=local) >= since)
        config = HoodieConfig(dict(options))
        dead = set(failed_writes(meta, config, now, timeline=timeline)) - set(
            starting_writes(meta, config, now, timeline=timeline))
        dead_recently = sum(1 for i in dead if instant_moment(i, local=local) >= since)
        return cls(
            need=need,
            last_commit=instant_moment(timeline.completion_time(last[0]), local=local) if last else None,
            last_commit_by=pipeline_of(last[1].extra_metadata) if last else None,
            failed_writes=rolled_back + dead_recently, pending_cleans=len(pending_cleans(timeline)))
