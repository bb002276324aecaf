"""Instants: the timeline's value objects, parsed from and printed back to their exact file names.

Layout 1 (table version 6) names files `<T>.<action>[.<state>]` directly in `.hoodie/`; layout 2
(table versions 8 and 9) keeps them in `.hoodie/timeline/` and names completed instants
`<T>_<completion>.<action>`. A completed COW commit's inflight file is `<T>.inflight` in both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from functools import lru_cache

from hudi_ops.errors import InvalidInstantTimeError, TimelineError

INSTANT_FORMAT = "%Y%m%d%H%M%S"
INSTANT_LENGTH = 17


class State(Enum):
    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"


class Action:
    """Hudi's action names, as written in instant file names."""

    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    CLUSTERING = "clustering"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    RESTORE = "restore"
    INDEXING = "indexing"
    SCHEMA_COMMIT = "schemacommit"

    ALL = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING, COMPACTION, LOG_COMPACTION, CLEAN,
           ROLLBACK, SAVEPOINT, RESTORE, INDEXING, SCHEMA_COMMIT)
    #: actions whose completed instants change which data files a reader sees
    WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)


_TIME = r"\d{14}(?:\d{3})?"
_NAME = re.compile(
    rf"^(?P<req>{_TIME}|\d+)(?:_(?P<comp>{_TIME}))?\.(?P<action>[a-z]+)(?:\.(?P<state>requested|inflight))?$"
)


@dataclass(frozen=True, slots=True, order=False)
class Instant:
    """One instant file: requested time, action, state and (layout 2, completed) completion time."""

    requested_time: str
    action: str
    state: State
    completion_time: str | None = None

    @classmethod
    def parse(cls, file_name: str) -> Instant:
        """Parse an instant file name; raises TimelineError for anything that is not one."""
        m = _NAME.match(file_name)
        if not m:
            raise TimelineError(f"{file_name!r} is not a Hudi instant file name")
        req, comp, action, state = m.group("req", "comp", "action", "state")
        if comp is not None and (state is not None or action == "inflight"):
            raise TimelineError(f"{file_name!r}: only completed instants carry a completion time")
        if action == "inflight" and state is None:  # `<T>.inflight` is a COW commit in flight
            return cls(req, Action.COMMIT, State.INFLIGHT)
        if action not in Action.ALL:
            raise TimelineError(f"{file_name!r} names unknown action {action!r}")
        if state is None:
            return cls(req, action, State.COMPLETED, comp)
        return cls(req, action, State(state))

    @classmethod
    def try_parse(cls, file_name: str) -> Instant | None:
        return _parse_cached(file_name)

    @property
    def file_name(self) -> str:
        t = self.requested_time
        if self.state is State.COMPLETED:
            return f"{t}_{self.completion_time}.{self.action}" if self.completion_time else f"{t}.{self.action}"
        if self.state is State.INFLIGHT and self.action == Action.COMMIT:
            return f"{t}.inflight"
        return f"{t}.{self.action}.{self.state.value}"

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def sort_key(self) -> tuple[str, int]:
        order = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
        return (self.requested_time, order[self.state])

    def __str__(self) -> str:
        done = f" completed {self.completion_time}" if self.completion_time else ""
        return f"[{self.requested_time}__{self.action}__{self.state.name}{done}]"


@lru_cache(maxsize=1 << 16)
def _parse_cached(file_name: str) -> Instant | None:
    """Timelines are listed again on every look (CLI call, sensor poke, timeline view); names, once parsed,
    stay parsed."""
    try:
        return Instant.parse(file_name)
    except TimelineError:
        return None


def instant_moment(text: str, *, local: bool) -> datetime:
    """The moment an instant time names: Hudi writes it in the writers' zone when the table's
    `hoodie.table.timeline.timezone` is LOCAL (its default; this machine's zone is taken for theirs), in
    UTC when it is UTC. Aware, so that moments of either kind compare."""
    moment = parse_instant_time(text)  # read as UTC
    return moment.replace(tzinfo=None).astimezone() if local else moment


def parse_instant_time(text: str) -> datetime:
    """A 17-digit (or legacy 14-digit) instant time as a UTC datetime."""
    bad = InvalidInstantTimeError(f"{text!r} is not an instant time; use yyyyMMddHHmmss[SSS], e.g. 20250101120000000")
    if not re.fullmatch(r"\d{14}(\d{3})?", text):
        raise bad
    try:
        base = datetime.strptime(text[:14], INSTANT_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise bad from None
    millis = int(text[14:]) if len(text) == INSTANT_LENGTH else 999
    return base.replace(microsecond=millis * 1000)
