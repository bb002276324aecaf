"""Instants: every timeline file name Spark wrote into the fixture tables parses and prints back exactly.

Names are read from the fixture zips (nothing is unpacked): layout 1 (table version 6) keeps instants in
`.hoodie/`, layout 2 (versions 8, 9) in `.hoodie/timeline/`; the metadata tables' own timelines count too.
Also: state transitions, the instant-time helpers and the instant time generator.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import threading
import zipfile
from datetime import UTC, datetime, timedelta, timezone
from functools import cache

import pytest

from hudi_ops.errors import TimelineError
from hudi_ops.format.instant import (
    Action,
    Instant,
    InstantTimeGenerator,
    State,
    format_instant_time,
    normalize_instant_time,
    parse_instant_time,
)
from tests.shared_data import FIXTURES

ZIPS = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*.zip"))


@cache
def timeline_names(relative_zip: str) -> dict[str, tuple[int, list[str]]]:
    """{timeline folder inside the zip: (layout version, instant file names)} for the table and its MDT."""
    out: dict[str, tuple[int, list[str]]] = {}
    with zipfile.ZipFile(FIXTURES / relative_zip) as z:
        for member in z.namelist():
            if member.startswith("__MACOSX/") or member.endswith("/"):
                continue
            folder, name = posixpath.split(member)
            if name == "hoodie.properties" or name == ".DS_Store":
                continue
            if folder.endswith("/.hoodie"):
                out.setdefault(folder, (1, []))[1].append(name)
            elif folder.endswith("/.hoodie/timeline"):
                out.setdefault(folder, (2, []))[1].append(name)
    return out


def test_the_fixture_zips_are_there():
    assert len(ZIPS) == 47
    layouts = {layout for z in ZIPS for layout, _ in timeline_names(z).values()}
    assert layouts == {1, 2}


@pytest.mark.parametrize("relative_zip", ZIPS)
def test_every_real_timeline_file_name_parses_and_prints_back(relative_zip):
    folders = timeline_names(relative_zip)
    if "empty" not in relative_zip:
        assert folders, "a table with commits must have timeline files"
    for folder, (layout, names) in folders.items():
        for name in names:
            instant = Instant.parse(name)
            assert instant.file_name == name, folder
            if name.endswith(".requested"):
                assert instant.state is State.REQUESTED
            elif name.endswith(".inflight"):
                assert instant.state is State.INFLIGHT
            else:
                assert instant.state is State.COMPLETED
            assert instant.action in Action.ALL
            assert instant.requested_time.isdigit()
            if instant.is_completed:
                if layout == 1:
                    assert instant.completion_time is None, name
                else:
                    # layout 2 always names completed instants <requested>_<completion>.<action>
                    assert re.fullmatch(r"\d{17}", instant.completion_time or ""), name
                    assert instant.completion_time > instant.requested_time, name
                    assert name.startswith(f"{instant.requested_time}_{instant.completion_time}.")


@pytest.mark.parametrize("relative_zip", ZIPS)
def test_every_completed_instant_has_its_requested_file(relative_zip):
    # parse keeps requested and completion time apart: the completed file's requested time matches the
    # `<T>.<action>.requested` (or `<T>.inflight`) file of the same instant
    for _folder, (_layout, names) in timeline_names(relative_zip).items():
        instants = [Instant.parse(n) for n in names]
        pending_times = {i.requested_time for i in instants if i.is_pending}
        for i in instants:
            if i.is_completed and i.requested_time.startswith("2"):  # MDT bootstrap instants 0000...have none
                assert i.requested_time in pending_times, i


def test_cow_commit_inflight_is_the_bare_inflight_file():
    i = Instant.parse("20250713010535797.inflight")
    assert i == Instant("20250713010535797", Action.COMMIT, State.INFLIGHT)
    assert i.file_name == "20250713010535797.inflight"
    # and the other way round: a commit in flight is always written as `<T>.inflight`
    assert Instant("20250713010535797", "commit", State.INFLIGHT).file_name == "20250713010535797.inflight"
    assert Instant("20250713010535797", "deltacommit", State.INFLIGHT).file_name == (
        "20250713010535797.deltacommit.inflight"
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("20250713010535797.commit.requested", Instant("20250713010535797", "commit", State.REQUESTED)),
        (
            "20250713010535797_20250713010536200.commit",
            Instant("20250713010535797", "commit", State.COMPLETED, "20250713010536200"),
        ),
        (
            "20251220210108078_20251220210109593.deltacommit",
            Instant("20251220210108078", "deltacommit", State.COMPLETED, "20251220210109593"),
        ),
        ("20240418173550988.commit", Instant("20240418173550988", "commit", State.COMPLETED)),
        ("20240418173550988.deltacommit.inflight", Instant("20240418173550988", "deltacommit", State.INFLIGHT)),
        ("20260307135840454.clustering.requested", Instant("20260307135840454", "clustering", State.REQUESTED)),
        (
            "20251220210117766_20251220210118628.indexing",
            Instant("20251220210117766", "indexing", State.COMPLETED, "20251220210118628"),
        ),
        (
            "00000000000000003_20260503194204863.deltacommit",  # a metadata-table instant
            Instant("00000000000000003", "deltacommit", State.COMPLETED, "20260503194204863"),
        ),
    ],
)
def test_parse_known_names(name, expected):
    assert Instant.parse(name) == expected
    assert expected.file_name == name


def test_completed_compaction_is_a_commit():
    # the v8 MOR trips fixture: compaction requested/inflight, completed as `<T>_<C>.commit`
    done = Instant.parse("20251220210129235_20251220210129883.commit")
    assert (done.action, done.state, done.completion_time) == ("commit", State.COMPLETED, "20251220210129883")
    planned = Instant.parse("20251220210129235.compaction.requested")
    assert (planned.action, planned.state) == (Action.COMPACTION, State.REQUESTED)
    running = planned.to_state(State.INFLIGHT)
    assert running.file_name == "20251220210129235.compaction.inflight"
    assert running.to_state(State.COMPLETED, "20251220210129883") == done


@pytest.mark.parametrize(
    ("pending_action", "completed_action"),
    [
        ("compaction", "commit"),
        ("logcompaction", "deltacommit"),
        ("clustering", "replacecommit"),
        ("commit", "commit"),
        ("deltacommit", "deltacommit"),
        ("replacecommit", "replacecommit"),
        ("clean", "clean"),
        ("rollback", "rollback"),
        ("indexing", "indexing"),
    ],
)
def test_to_state_walks_requested_inflight_completed(pending_action, completed_action):
    t, c = "20260101000000000", "20260101000000500"
    requested = Instant(t, pending_action, State.REQUESTED)
    assert requested.is_pending and not requested.is_completed
    inflight = requested.to_state(State.INFLIGHT)
    assert inflight.action == pending_action and inflight.state is State.INFLIGHT
    assert inflight.completion_time is None
    done = inflight.to_state(State.COMPLETED, c)
    assert done == Instant(t, completed_action, State.COMPLETED, c)
    assert done.file_name == f"{t}_{c}.{completed_action}"
    assert Instant.parse(done.file_name) == done
    assert Instant.parse(inflight.file_name) == inflight
    # layout 1: completed without a completion time
    assert inflight.to_state(State.COMPLETED).file_name == f"{t}.{completed_action}"
    # the original is unchanged (instants are values)
    assert requested.state is State.REQUESTED


def test_sort_key_orders_by_time_then_state():
    names = [
        "20250102000000000_20250102000000900.commit",
        "20250101000000000.inflight",
        "20250102000000000.commit.requested",
        "20250101000000000.commit.requested",
        "20250101000000000_20250101000000500.commit",
        "20250102000000000.inflight",
    ]
    ordered = sorted((Instant.parse(n) for n in names), key=lambda i: i.sort_key)
    assert [i.file_name for i in ordered] == [
        "20250101000000000.commit.requested",
        "20250101000000000.inflight",
        "20250101000000000_20250101000000500.commit",
        "20250102000000000.commit.requested",
        "20250102000000000.inflight",
        "20250102000000000_20250102000000900.commit",
    ]


JUNK = [
    "",
    "hoodie.properties",
    "history",
    "archived",
    ".temp",
    ".aux",
    "abc.commit",
    "2025010100000000a.commit",
    "20250101000000000",
    "20250101000000000.Commit",
    "20250101000000000.unknownaction",
    "20250101000000000.commit.crc",
    "20250101000000000.commit.requested.crc",
    "20250101000000000.commit.completed",
    "20250101000000000.inflight.requested",
    ".20250101000000000.commit",
    "20250101000000000_2025.commit",
    "20250101000000000_20250101000000001.commit.requested",
    "20250101000000000_20250101000000001.deltacommit.inflight",
    "20250101000000000_20250101000000001.inflight",  # a pending commit cannot carry a completion time
]


@pytest.mark.parametrize("name", JUNK)
def test_junk_is_not_an_instant(name):
    with pytest.raises(TimelineError):
        Instant.parse(name)
    assert Instant.try_parse(name) is None


# -- instant times ---------------------------------------------------------------------------------


def test_format_instant_time_is_utc_millis():
    assert format_instant_time(datetime(2025, 1, 2, 3, 4, 5, 678999, tzinfo=UTC)) == "20250102030405678"
    plus_two = timezone(timedelta(hours=2))
    assert format_instant_time(datetime(2025, 1, 2, 5, 4, 5, 678000, tzinfo=plus_two)) == "20250102030405678"
    # crossing midnight and a year when converting to UTC
    assert format_instant_time(datetime(2026, 1, 1, 1, 0, 0, tzinfo=plus_two)) == "20251231230000000"


def test_parse_instant_time_round_trips():
    for text in ("20250102030405678", "20240229235959000", "20251231235959999"):
        dt = parse_instant_time(text)
        assert dt.tzinfo is not None and dt.utcoffset() == timedelta(0)
        assert format_instant_time(dt) == text
    assert parse_instant_time("20250102030405678") == datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


def test_legacy_14_digit_instant_is_the_end_of_its_second():
    # Hudi appends "999" to 14-digit instants, so a legacy instant sorts after every 17-digit one of its second
    assert parse_instant_time("20250102030405") == datetime(2025, 1, 2, 3, 4, 5, 999000, tzinfo=UTC)
    assert normalize_instant_time("20250102030405") == "20250102030405999"


@pytest.mark.parametrize("text", ["2025010203040", "2025-01-02", "abc", "", "202501020304056789", "20251302030405678"])
def test_parse_instant_time_rejects_non_instants(text):
    with pytest.raises(TimelineError):
        parse_instant_time(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("20250102030405678", "20250102030405678"),
        (" 20250102030405678 ", "20250102030405678"),
        ("20250102030405", "20250102030405999"),
        ("2025-01-02T03:04:05.678Z", "20250102030405678"),
        ("2025-01-02T03:04:05.678+00:00", "20250102030405678"),
        ("2025-01-02T05:04:05.678+02:00", "20250102030405678"),
        ("2025-01-01T22:04:05-05:00", "20250102030405000"),
        ("2025-01-02T03:04:05.678", "20250102030405678"),  # naive ISO is UTC
        ("2025-01-02 03:04:05", "20250102030405000"),
        ("1735787045678", "20250102030405678"),  # epoch milliseconds
        ("1735787045", "20250102030405000"),  # epoch seconds
        ("0000000000000", "19700101000000000"),
        ("00000000000000000", "00000000000000000"),  # Hudi's init instant (and the MDT's first instant)
    ],
)
def test_normalize_instant_time(text, expected):
    assert normalize_instant_time(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "", "2025-13-01T00:00:00Z", "12345678901234567890x", "2025/01/02"])
def test_normalize_rejects_what_is_not_a_time(text):
    with pytest.raises(TimelineError, match="ISO-8601"):
        normalize_instant_time(text)


def test_normalized_times_compare_like_instants():
    # the point of normalizing: string order == time order, across input formats
    times = ["2025-01-02T03:04:05Z", "1735787045001", "20250102030405002", "20250102030405"]
    assert sorted(times, key=normalize_instant_time) == times


# -- the generator ---------------------------------------------------------------------------------


@pytest.fixture
def fresh_generator(monkeypatch):
    """The generator's process-wide memory, restored afterwards so other tests never see a future floor."""
    monkeypatch.setattr(InstantTimeGenerator, "_last", "0")
    return InstantTimeGenerator


def test_generator_is_strictly_increasing_and_near_now(fresh_generator):
    before = format_instant_time(datetime.now(UTC))
    times = [fresh_generator.next() for _ in range(3000)]
    assert all(re.fullmatch(r"\d{17}", t) for t in times)
    assert all(a < b for a, b in itertools.pairwise(times))
    assert times[0] >= before
    # 3000 calls run ahead of the clock by at most their count in milliseconds
    assert parse_instant_time(times[-1]) - datetime.now(UTC) < timedelta(seconds=4)


def test_generator_passes_a_floor_far_in_the_future(fresh_generator):
    floor = "29991231235959998"
    assert fresh_generator.next(floor) == "29991231235959999"
    assert fresh_generator.next(floor) == "30000101000000000"  # stays past the floor, across a year
    assert fresh_generator.next() == "30000101000000001"  # and remembers it without the floor
    assert fresh_generator.next("20250101000000000") == "30000101000000002"  # an older floor does not go back


def test_generator_accepts_a_legacy_14_digit_floor(fresh_generator):
    t = fresh_generator.next("29990101000000")
    assert t > "29990101000000999"
    assert len(t) == 17


def test_generator_is_unique_across_threads(fresh_generator):
    out: list[str] = []
    lock = threading.Lock()

    def work():
        mine = [fresh_generator.next() for _ in range(300)]
        with lock:
            out.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == len(set(out)) == 2400
