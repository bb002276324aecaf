"""Is there work for a table service? Asked of the timeline and the file listing in Python, no JVM.

The Airflow operators ask before spark-submit and skip an idle task in milliseconds, saying why.
Each check errs towards work: "idle" only when Hudi's service certainly has nothing to do (a wrong
"due" costs one spark-submit that Hudi finds idle; a wrong "idle" would skip real work).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.timeline import Timeline
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import ArchivalConfig, ClusteringConfig, CompactionConfig
from hudi_ops.read.clean_planner import next_clean
from hudi_ops.read.heartbeats import failed_writes
from hudi_ops.read.pending_plans import every_pending_plan, pending_cleans, pending_plans


@dataclass(frozen=True)
class ServiceWork:
    due: bool
    reason: str  # what makes it due, or why there is nothing to do


def plan_execution_work(meta: MetaClient, service: str) -> ServiceWork:
    """An executor has work when a plan is pending."""
    plans = pending_plans(meta.timeline(), service)
    if not plans:
        return ServiceWork(False, f"no pending {service} plan")
    return ServiceWork(True, f"{len(plans)} pending {service} plan(s), oldest {plans[0].instant}")


def clean_execution_work(meta: MetaClient) -> ServiceWork:
    """An executor of cleans has work when a clean plan is pending."""
    pending = pending_cleans(meta.timeline())
    return ServiceWork(bool(pending), f"{len(pending)} pending clean plan(s)")


def compaction_schedule_work(meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
    """Hudi's NUM_COMMITS trigger: due after `hoodie.compact.inline.max.delta.commits` deltacommits
    (in any state) since the last completed compaction. The other trigger strategies are not
    modelled: for them compaction is always worth a try."""
    if not meta.is_mor:
        return ServiceWork(False, "a COPY_ON_WRITE table has no log files to compact")
    config = HoodieConfig(dict(options))
    strategy = config.require(CompactionConfig.TRIGGER_STRATEGY)
    if strategy != "NUM_COMMITS":
        return ServiceWork(True, f"{CompactionConfig.TRIGGER_STRATEGY.name}={strategy}: left to Hudi")
    timeline = meta.timeline()
    needed = config.require(CompactionConfig.MAX_DELTA_COMMITS)
    last = max((i.requested_time for i in timeline.completed if i.action == Action.COMMIT), default="")
    since = len({i.requested_time for i in timeline.instants
                 if i.action == Action.DELTA_COMMIT and i.requested_time > last})
    due = since >= needed
    return ServiceWork(due, f"{since} deltacommit(s) since the last compaction, "
                            f"{'at least' if due else 'fewer than'} {CompactionConfig.MAX_DELTA_COMMITS.name}={needed}")


def clustering_schedule_work(meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
    """Hudi's size-based plan strategy: file slices whose base file is under the small-file limit (or
    that have none) are candidates, outside pending plans, in the partitions written since the last
    clustering (Hudi 1.x plans table services incrementally). A partition needs two candidates, or
    one when single-group clustering is on (Hudi's default) or clustering sorts."""
    config = HoodieConfig(dict(options))
    limit = config.require(ClusteringConfig.SMALL_FILE_LIMIT)
    single = config.require(ClusteringConfig.SINGLE_GROUP) == "TRUE" or bool(config.get(ClusteringConfig.SORT_COLUMNS))
    needed = 1 if single else 2
    view = meta.fs_view()
    written = _written_since_last_clustering(view.timeline) \
        if config.require(ClusteringConfig.INCREMENTAL) == "TRUE" else None
    planned = {g for p in every_pending_plan(view.timeline) for g in p.file_groups}
    small: dict[str, int] = {}
    for group in view.file_groups():
        latest, partition = group.latest_slice, group.id.partition_path
        if group.id in planned or latest is None or (written is not None and partition not in written):
            continue
        if latest.base_file is None or latest.base_file.size < limit:
            small[partition] = small.get(partition, 0) + 1
    crowded = {p: n for p, n in small.items() if n >= needed}
    if not crowded:
        since = " written since the last clustering" if written is not None else ""
        return ServiceWork(False, f"no partition{since} has {needed} file group(s) under "
                                  f"{ClusteringConfig.SMALL_FILE_LIMIT.name}={limit}")
    worst = max(crowded, key=lambda p: crowded[p])
    return ServiceWork(True, f"{len(crowded)} partition(s) with small files; {worst or '(table)'} has "
                             f"{crowded[worst]} under {limit} bytes")


def _written_since_last_clustering(timeline: Timeline) -> set[str] | None:
    """The partitions of the completed writes after the latest completed clustering; None (every
    partition, as Hudi plans then) when the active timeline has none. Only replacecommits can be a
    clustering, so the writes' metadata is read from the newest clustering on, never the whole timeline."""
    writes = timeline.completed_writes()
    replaced = [i for i in reversed(writes) if i.action == Action.REPLACE_COMMIT]
    last = next((i.requested_time for i in replaced if timeline.commit_metadata(i).operation_type == "CLUSTER"), None)
    if last is None:
        return None
    later = [(i, timeline.commit_metadata(i)) for i in writes if i.requested_time > last]
    return {s.partition_path or "" for _, m in later if m.operation_type != "CLUSTER" for s in m.write_stats()}


def clean_work(meta: MetaClient, options: Mapping[str, str], now: dt.datetime | None = None) -> ServiceWork:
    """Due when there are failed writes to roll back, a clean plan left pending, or slices Hudi's
    policy removes (hudi_ops.read.clean_planner)."""
    config = HoodieConfig(dict(options))
    timeline = meta.timeline()
    failed = failed_writes(meta, config, now, timeline=timeline)
    if failed:  # Hudi's clean rolls back failed writes first (LAZY)
        return ServiceWork(True, f"{len(failed)} failed write(s) to roll back, oldest {failed[0]}")
    left = pending_cleans(timeline)
    if left:
        return ServiceWork(True, f"{len(left)} pending clean plan(s), oldest {left[0]}")
    # by hours: instant times are in the writers' zone (Hudi's default: their local time), which may not
    # be this machine's, so the cut may lie anywhere a zone away; the check takes the widest clean
    plan = next_clean(meta, options, now=now, view=meta.fs_view(timeline), zone_slack=_ANY_ZONE)
    if not plan.slices:
        retain = f"earliest commit to retain: {plan.earliest_commit_to_retain}" \
            if plan.earliest_commit_to_retain else "no earliest commit to retain yet"
        return ServiceWork(False, f"{plan.policy} removes no file slice" + (
            "" if plan.policy == "KEEP_LATEST_FILE_VERSIONS" else f" ({retain})"))
    return ServiceWork(True, f"{plan.policy} removes {len(plan.slices)} file slice(s), {len(plan.files)} file(s)")


def archive_work(meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
    """Hudi's archiver starts when more than `hoodie.keep.max.commits` completed commits, or cleans, or
    rollbacks are on the active timeline. Its other rules only ever keep more (a savepoint or a pending
    plan can hold every instant back: then the check stays due and Hudi finds nothing)."""
    keep = HoodieConfig(dict(options)).require(ArchivalConfig.MAX_COMMITS_TO_KEEP)
    completed = meta.timeline().completed
    counts = {"commit(s)": sum(1 for i in completed if i.action in Action.WRITE_ACTIONS),
              "clean(s)": sum(1 for i in completed if i.action == Action.CLEAN),
              "rollback(s)": sum(1 for i in completed if i.action == Action.ROLLBACK)}
    due = max(counts.values()) > keep
    return ServiceWork(due, ", ".join(f"{n} completed {what}" for what, n in counts.items()) +
                       f" active, {'more than' if due else 'at most'} {ArchivalConfig.MAX_COMMITS_TO_KEEP.name}={keep}")


#: the widest distance between a local time and UTC
_ANY_ZONE = dt.timedelta(hours=14)
