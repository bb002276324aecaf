"""Writers' heartbeats: which pending writes are alive, which failed, which are just starting.

Hudi's writers touch `.hoodie/.heartbeat/<instant>` every `hoodie.client.heartbeat.interval_in_ms`;
a write is taken for failed once its file is older than the interval times
`hoodie.client.heartbeat.tolerable.misses`. The folder is listed once per question (one LIST on object
storage, whatever the number of pending writes).
"""

from __future__ import annotations

import datetime as dt

from hudi_ops.format.instant import State
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.timeline import Timeline
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import HeartbeatConfig
from hudi_ops.read.pending_plans import pending_writes

#: where Hudi's writers keep their heartbeat files, one per instant
HEARTBEAT_FOLDER = ".hoodie/.heartbeat"


def heartbeat_expiry_ms(config: HoodieConfig) -> int:
    """How long after its last beat Hudi takes a writer for failed: interval x tolerable misses."""
    return config.require(HeartbeatConfig.INTERVAL_MS) * config.require(HeartbeatConfig.TOLERABLE_MISSES)


def last_beats(meta: MetaClient) -> dict[str, int]:
    """Each heartbeat file's instant and modification time (ms)."""
    return {f.name: f.mtime_ms for f in meta.storage.list_files(HEARTBEAT_FOLDER)}


def live_writes(meta: MetaClient, config: HoodieConfig, now: dt.datetime | None = None) -> list[str]:
    """Pending writes whose heartbeat is alive: writers still at work on the table."""
    timeline = meta.timeline()
    failed = set(failed_writes(meta, config, now, timeline=timeline))
    return [i for i in pending_writes(timeline) if i not in failed]


def failed_writes(meta: MetaClient, config: HoodieConfig, now: dt.datetime | None = None, *,
                  timeline: Timeline | None = None) -> list[str]:
    """Pending writes whose heartbeat expired (or never started): what LAZY cleaning rolls back."""
    pending = pending_writes(timeline or meta.timeline())
    if not pending:
        return []
    expiry_ms = heartbeat_expiry_ms(config)
    now_ms = (now or dt.datetime.now(dt.UTC)).timestamp() * 1000
    beats = last_beats(meta)
    return [i for i in pending if i not in beats or now_ms - beats[i] > expiry_ms]


def starting_writes(meta: MetaClient, config: HoodieConfig, now: dt.datetime | None = None, *,
                    timeline: Timeline | None = None) -> list[str]:
    """Pending writes without a heartbeat file whose requested instant is younger than a heartbeat's
    expiry: a writer between its requested instant and its first beat. Hudi's LAZY rollback takes a
    missing heartbeat file for an expired one (its last beat reads as 0), so it would roll such a
    live write back; Hudi's own writers beat before they request, others may not."""
    timeline = timeline or meta.timeline()
    pending = pending_writes(timeline)
    if not pending:
        return []
    expiry_ms = heartbeat_expiry_ms(config)
    now_ms = (now or dt.datetime.now(dt.UTC)).timestamp() * 1000
    requested = {i.requested_time: i for i in timeline.instants if i.state is State.REQUESTED}
    beats = last_beats(meta)
    out = []
    for instant in pending:
        if instant in beats or instant not in requested:
            continue
        made = meta.storage.file_info(timeline.path_of(requested[instant]))
        if made is not None and now_ms - made.mtime_ms <= expiry_ms:
            out.append(instant)
    return out
