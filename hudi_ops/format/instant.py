"""Instants: the timeline's value objects, parsed from and printed back to their exact file names.

Layout 1 (table version 6) names files `<T>.<action>[.<state>]` directly in `.hoodie/`; layout 2
(table versions 8 and 9) keeps them in `.hoodie/timeline/` and names completed instants
`<T>_<completion>.<action>`. A completed COW commit's inflight file is `<T>.inflight` in both.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import Enum
from functools import lru_cache
from typing import ClassVar

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

    #: the action a pending instant completes as (layout 2; clustering is a replacecommit in layout 1)
    COMPLETES_AS: ClassVar[dict[str, str]] = {
        COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT, CLUSTERING: REPLACE_COMMIT,
    }


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
    def is_pending(self) -> bool:
        return self.state is not State.COMPLETED

    def to_state(self, state: State, completion_time: str | None = None) -> Instant:
        """The same instant in another state; completing a compaction/clustering renames the action."""
        action = self.action
        if state is State.COMPLETED:
            action = Action.COMPLETES_AS.get(action, action)
        return replace(self, action=action, state=state, completion_time=completion_time)

    @property
    def sort_key(self) -> tuple[str, int]:
        order = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
        return (self.requested_time, order[self.state])

    def __str__(self) -> str:
        done = f" completed {self.completion_time}" if self.completion_time else ""
        return f"[{self.requested_time}__{self.action}__{self.state.name}{done}]"


@lru_cache(maxsize=1 << 16)
def _parse_cached(file_name: str) -> Instant | None:
    """Timelines are listed again for every write; names, once parsed, stay parsed."""
    try:
        return Instant.parse(file_name)
    except TimelineError:
        return None


def format_instant_time(dt: datetime) -> str:
    """`yyyyMMddHHmmssSSS` in UTC."""
    dt = dt.astimezone(UTC)
    return dt.strftime(INSTANT_FORMAT) + f"{dt.microsecond // 1000:03d}"


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


def normalize_instant_time(text: str) -> str:
    """Accept `yyyyMMddHHmmss[SSS]`, ISO-8601 (naive = UTC) or epoch millis; return 17 digits."""
    t = text.strip()
    if re.fullmatch(r"0+", t) and not 10 <= len(t) <= 13:  # "000": Hudi's "from the beginning"
        return "0" * INSTANT_LENGTH
    if re.fullmatch(r"\d{14}(\d{3})?", t):
        parse_instant_time(t)  # rejects impossible dates such as month 13
        return t if len(t) == INSTANT_LENGTH else t + "999"
    if re.fullmatch(r"\d{10,13}", t):
        ms = int(t) if len(t) == 13 else int(t) * 1000
        return format_instant_time(datetime.fromtimestamp(ms / 1000, UTC))
    try:
        dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInstantTimeError(
            f"{text!r} is not a time; use an instant (yyyyMMddHHmmssSSS), ISO-8601 or epoch milliseconds"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return format_instant_time(dt)


class InstantTimeGenerator:
    """Instant times in UTC milliseconds, strictly increasing within the process and past a floor.

    The floor is the greatest time already on the timeline, which callers read under the table lock
    so that times also increase across writers.
    """

    _lock = threading.Lock()
    _last = "0"

    @classmethod
    def next(cls, floor: str | None = None) -> str:
        with cls._lock:
            bound = max(cls._last, floor or "0")
            now = format_instant_time(datetime.now(UTC))
            if now <= bound:
                # another writer's clock ran ahead, or two calls fell in one millisecond
                now = format_instant_time(parse_instant_time(bound) + timedelta(milliseconds=1))
            cls._last = now
            return now
