"""How much a table needs each of its services, measured in one look at it (one timeline listing, one
file-system view: the metadata table's `files` partition when it has one), without a JVM.

A fleet's scheduler (hudi_ops.fleet) ranks tables by it. The figures are what a user would watch:
log files per file slice (what a MERGE_ON_READ read merges), the share of small base files (what
clustering rewrites), what the next clean removes, instants past archival, plans left pending and since
when, when the table's ingest last completed a commit (its freshness); each
service's due/idle verdict is the operators' own (hudi_ops.read.service_work), on the same look.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_ops.errors import HudiOpsError
from hudi_ops.format.instant import instant_moment
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import ClusteringConfig
from hudi_ops.read.pending_plans import every_pending_plan
from hudi_ops.read.pipeline_metadata import JOB_KEY
from hudi_ops.read.service_work import ServiceWork
from hudi_ops.read.table_services import CLUSTERING, SERVICES


@dataclass(frozen=True)
class TableNeed:
    """One table's state as its services see it; `work` holds each asked service's verdict."""

    log_files: tuple[int, ...] = ()  # per latest file slice (MERGE_ON_READ; empty otherwise)
    small_files: int = 0  # latest slices whose base file is under the clustering's small-file limit
    slices: int = 0
    pending_plans: int = 0  # compaction and clustering plans scheduled, not yet executed
    work: dict[str, ServiceWork] = field(default_factory=dict)
    executes: frozenset[str] = frozenset()  # the due services whose work is a pending plan's execution
    oldest_pending_plan: dt.datetime | None = None  # when the oldest of them was requested
    latest_ingest: dt.datetime | None = None  # when hudi-ops' ingest last completed a commit (active timeline)

    def due(self) -> tuple[str, ...]:
        return tuple(s for s in SERVICES if s in self.work and self.work[s].due)

    @property
    def max_log_files(self) -> int:
        return max(self.log_files, default=0)

    def log_files_percentile(self, p: int) -> float | None:
        """Log files per latest slice at the `p`th percentile, by the nearest rank (a small table's 99th is
        its fullest slice, not a blend); None without log files to count (COPY_ON_WRITE)."""
        if not self.log_files:
            return None
        ordered = sorted(self.log_files)
        return float(ordered[max(1, -(-p * len(ordered) // 100)) - 1])

    @property
    def small_file_share(self) -> float:
        return self.small_files / self.slices if self.slices else 0.0


def measure(meta: MetaClient, options: Mapping[str, Mapping[str, str]], *, now: dt.datetime | None = None,
            freshness: bool = False) -> TableNeed:
    """The table's need; `options` maps each service the table runs to its hoodie.* options (a service not
    named is not asked about); `freshness`: and when its ingest last committed (a table that hudi-ops
    ingests: the look reads commits back to its latest ingest's)."""
    view = meta.fs_view()  # the one look every check below shares (MetaClient keeps it)
    limit = HoodieConfig(dict(options.get(CLUSTERING.name, {}))).require(ClusteringConfig.SMALL_FILE_LIMIT)
    latest = [g.latest_slice for g in view.file_groups() if g.latest_slice is not None]
    asked = [s for s in SERVICES.values() if s.name in options]
    # a pending plan is work of its own, which an executor runs before anything new is planned
    execution = {s.name: s.execution(meta) for s in asked if s.plans and s.execution is not None}
    executes = frozenset(name for name, work in execution.items() if work.due)
    plans = every_pending_plan(view.timeline)
    local = meta.properties.timeline_timezone == "LOCAL"
    return TableNeed(
        log_files=tuple(len(s.log_files) for s in latest) if meta.is_mor else (),
        small_files=sum(1 for s in latest if s.base_file is None or s.base_file.size < limit),
        slices=len(latest),
        pending_plans=len(plans),
        work={s.name: execution[s.name] if s.name in executes else s.work(meta, options[s.name], now) for s in asked},
        executes=executes,
        oldest_pending_plan=instant_moment(min(p.instant for p in plans), local=local) if plans else None,
        latest_ingest=latest_ingest(meta) if freshness else None,
    )


def latest_ingest(meta: MetaClient) -> dt.datetime | None:
    """When the latest commit of hudi-ops' ingest on the active timeline completed (a backfill or a
    service brings nothing new from the table's source); None when none is there, or when a commit cannot
    be read: the freshness is a figure for people, never in the way of the services' verdicts."""
    timeline = meta.timeline()
    local = meta.properties.timeline_timezone == "LOCAL"
    try:
        for inst, metadata in timeline.newest_writes():
            if metadata.extra_metadata.get(JOB_KEY) == "ingest":
                return instant_moment(timeline.completion_time(inst), local=local)
    except (HudiOpsError, OSError, ValueError):
        return None
    return None
