"""Instants: every timeline file name Spark wrote into the fixture tables parses and prints back exactly.

Names are read from the fixture zips (nothing is unpacked): layout 1 (table version 6) keeps instants in
`.hoodie/`, layout 2 (versions 8, 9) in `.hoodie/timeline/`; the metadata tables' own timelines count too.
Also: instant times as UTC datetimes.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from datetime import UTC, datetime, timedelta
from functools import cache

import pytest

from hudi_ops.errors import TimelineError
from hudi_ops.format.instant import Action, Instant, State, parse_instant_time
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
        pending_times = {i.requested_time for i in instants if not i.is_completed}
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
    running = Instant.parse("20251220210129235.compaction.inflight")
    assert (running.action, running.state, running.requested_time) == (Action.COMPACTION, State.INFLIGHT,
                                                                       done.requested_time)


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


def test_parse_instant_time_is_utc_millis():
    assert parse_instant_time("20250102030405678") == datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    for text in ("20240229235959000", "20251231235959999"):
        dt = parse_instant_time(text)
        assert dt.tzinfo is not None and dt.utcoffset() == timedelta(0)
        assert dt.strftime("%Y%m%d%H%M%S") + f"{dt.microsecond // 1000:03d}" == text


def test_legacy_14_digit_instant_is_the_end_of_its_second():
    # Hudi appends "999" to 14-digit instants, so a legacy instant sorts after every 17-digit one of its second
    assert parse_instant_time("20250102030405") == datetime(2025, 1, 2, 3, 4, 5, 999000, tzinfo=UTC)


@pytest.mark.parametrize("text", ["2025010203040", "2025-01-02", "abc", "", "202501020304056789", "20251302030405678"])
def test_parse_instant_time_rejects_non_instants(text):
    with pytest.raises(TimelineError):
        parse_instant_time(text)
