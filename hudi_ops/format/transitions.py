"""The only code that writes instant files: requested -> inflight -> completed, each immutable.

A completed file `<T>_<C>.<action>` is created last and atomically; until it exists, readers
ignore everything the instant wrote.
"""

from __future__ import annotations

from hudi_ops.errors import FileAlreadyExistsError, TimelineError
from hudi_ops.format.instant import Instant, State
from hudi_ops.format.timeline import Timeline


def _create(timeline: Timeline, instant: Instant, content: bytes) -> Instant:
    try:
        timeline.storage.create_new(timeline.path_of(instant), content)
    except FileAlreadyExistsError:
        raise TimelineError(
            f"instant file {instant.file_name} exists already: instant {instant.requested_time} was used before",
            instant=instant.requested_time,
        ) from None
    return instant


def create_requested(timeline: Timeline, requested_time: str, action: str, content: bytes = b"") -> Instant:
    return _create(timeline, Instant(requested_time, action, State.REQUESTED), content)


def transition_to_inflight(timeline: Timeline, requested: Instant, content: bytes = b"") -> Instant:
    if requested.state is not State.REQUESTED:
        raise TimelineError(f"{requested} is not requested", instant=requested.requested_time)
    return _create(timeline, requested.to_state(State.INFLIGHT), content)


def transition_to_completed(timeline: Timeline, inflight: Instant, completion_time: str, content: bytes) -> Instant:
    if inflight.state is not State.INFLIGHT:
        raise TimelineError(f"{inflight} is not inflight", instant=inflight.requested_time)
    if completion_time <= inflight.requested_time:
        raise TimelineError(
            f"completion time {completion_time} must be later than {inflight.requested_time}",
            instant=inflight.requested_time,
        )
    return _create(timeline, inflight.to_state(State.COMPLETED, completion_time), content)


def delete_pending(timeline: Timeline, requested_time: str) -> list[Instant]:
    """Remove a pending instant's files, inflight before requested (Hudi's order). Refuses completed ones."""
    states = timeline.reload().states_of(requested_time)
    if any(i.is_completed for i in states):
        raise TimelineError(f"instant {requested_time} is completed; roll it back instead", instant=requested_time)
    removed = []
    for inst in sorted(states, key=lambda i: i.sort_key, reverse=True):
        timeline.storage.delete_file(timeline.path_of(inst))
        removed.append(inst)
    return removed
