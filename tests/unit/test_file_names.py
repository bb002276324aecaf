"""Base and log file names: every data file Spark wrote into the fixture tables parses and prints back.

Names are read from the fixture zips (nothing is unpacked): data files of the tables and of their metadata
tables (HFile base files, MDT logs). The parsed fields must also mean what the format says: a base file's
instant is an instant of its table's timeline, a v8+ log names its deltacommit, a v6 log its slice's base.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from dataclasses import dataclass
from functools import cache

import pytest

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.file_names import BaseFileName, LogFileName
from hudi_ops.format.instant import Instant
from tests.shared_data import FIXTURES

ZIPS = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*.zip"))


@dataclass(frozen=True)
class ZipTable:
    base_files: list[tuple[str, str]]  # (folder inside the zip, name)
    log_files: list[tuple[str, str]]
    requested_times: frozenset[str]  # of the data table's timeline (not the MDT's)
    table_version: int


@cache
def zip_table(relative_zip: str) -> ZipTable:
    bases, logs, times = [], [], set()
    version = 0
    with zipfile.ZipFile(FIXTURES / relative_zip) as z:
        for member in z.namelist():
            if member.startswith("__MACOSX/") or member.endswith("/"):
                continue
            folder, name = posixpath.split(member)
            parts = folder.split("/")
            if name == ".DS_Store" or name.startswith(".hoodie_partition_metadata"):
                continue
            if ".hoodie" in parts:
                inner = parts[parts.index(".hoodie") + 1:]
                if not inner and name == "hoodie.properties":
                    text = z.read(member).decode()
                    version = int(next(ln for ln in text.splitlines() if ln.startswith("hoodie.table.version="))[21:])
                if inner in ([], ["timeline"]) and (i := Instant.try_parse(name)) is not None:
                    times.add(i.requested_time)
                # metadata-table partitions hold data files too; its own `.hoodie` and the index defs do not
                if not (len(inner) >= 2 and inner[0] == "metadata" and inner[1] != ".hoodie"):
                    continue
            (logs if name.startswith(".") else bases).append((folder, name))
    return ZipTable(bases, logs, frozenset(times), version)


def test_the_fixtures_hold_many_data_files():
    bases = sum(len(zip_table(z).base_files) for z in ZIPS)
    logs = sum(len(zip_table(z).log_files) for z in ZIPS)
    assert bases > 500 and logs > 1000  # data tables and their metadata tables
    extensions = {BaseFileName.parse(n).extension for z in ZIPS for _, n in zip_table(z).base_files}
    assert extensions == {"parquet", "lance", "hfile"}


@pytest.mark.parametrize("relative_zip", ZIPS)
def test_every_base_file_name_parses_and_prints_back(relative_zip):
    table = zip_table(relative_zip)
    for folder, name in table.base_files:
        parsed = BaseFileName.parse(name)
        assert parsed.file_name == name
        assert str(parsed) == name
        assert BaseFileName.try_parse(name) == parsed
        assert name.startswith(parsed.file_id + "_")
        assert re.fullmatch(r"\d+-\d+-\d+", parsed.write_token)  # <task partition>-<stage>-<attempt>
        assert len(parsed.instant_time) == 17 and parsed.instant_time.isdigit()
        if "/.hoodie/metadata/" not in folder + "/":
            # the instant in a base file name is the requested time of an instant on the table's timeline
            assert parsed.instant_time in table.requested_times, name
        # a base file is never taken for a log file
        assert LogFileName.try_parse(name) is None


@pytest.mark.parametrize("relative_zip", ZIPS)
def test_every_log_file_name_parses_and_prints_back(relative_zip):
    table = zip_table(relative_zip)
    base_slices = {(f, BaseFileName.parse(n).file_id, BaseFileName.parse(n).instant_time) for f, n in table.base_files}
    for folder, name in table.log_files:
        parsed = LogFileName.parse(name)
        assert parsed.file_name == name
        assert LogFileName.try_parse(name) == parsed
        assert parsed.kind == "log" and not parsed.cdc
        assert parsed.version >= 1
        assert re.fullmatch(r"\d+-\d+-\d+", parsed.write_token or "")
        assert name.startswith(f".{parsed.file_id}_{parsed.instant_time}.log.{parsed.version}_")
        assert BaseFileName.try_parse(name) is None
        if "/.hoodie/metadata/" in folder + "/":
            continue
        if table.table_version >= 8:
            # v8+: the log names the deltacommit that wrote it
            assert parsed.instant_time in table.requested_times, name
        else:
            # v6: the log names the base instant of its file slice
            assert (folder, parsed.file_id, parsed.instant_time) in base_slices, name


def test_real_names_field_by_field():
    b = BaseFileName.parse("7b0ea4f9-9b5c-4d6a-8e4f-8e2c5d1b9e0a-0_1-115-169_20250713011315930.parquet")
    assert b == BaseFileName("7b0ea4f9-9b5c-4d6a-8e4f-8e2c5d1b9e0a-0", "1-115-169", "20250713011315930", "parquet")
    lg = LogFileName.parse(".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210127080.log.1_0-1072-3078")
    assert lg == LogFileName("6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0", "20251220210127080", 1, "0-1072-3078")
    mdt = BaseFileName.parse("files-0000-0_0-5-4_00000000000000000.hfile")
    assert (mdt.file_id, mdt.write_token, mdt.instant_time, mdt.extension) == (
        "files-0000-0", "0-5-4", "00000000000000000", "hfile",
    )


def test_other_log_name_shapes_round_trip():
    cdc = LogFileName.parse(".fid-0_20250101000000000.log.1_0-0-0.cdc")
    assert cdc.cdc and cdc.file_name == ".fid-0_20250101000000000.log.1_0-0-0.cdc"
    old = LogFileName.parse(".fid-0_20250101000000000.log.3")  # no write token (very old writers)
    assert old.write_token is None and old.version == 3 and old.file_name == ".fid-0_20250101000000000.log.3"
    archive = LogFileName.parse(".commits_.archive.1_1-0-1")  # layout-1 archived timeline
    assert (archive.file_id, archive.instant_time, archive.kind) == ("commits", "", "archive")
    assert archive.file_name == ".commits_.archive.1_1-0-1"


def test_log_files_sort_by_instant_then_numeric_version():
    names = [
        ".f-0_20250102000000000.log.1_0-0-0",
        ".f-0_20250101000000000.log.10_0-0-0",
        ".f-0_20250101000000000.log.2_1-0-0",
        ".f-0_20250101000000000.log.2_0-0-0",
    ]
    ordered = sorted((LogFileName.parse(n) for n in names), key=lambda f: f.sort_key)
    assert [f.file_name for f in ordered] == [
        ".f-0_20250101000000000.log.2_0-0-0",
        ".f-0_20250101000000000.log.2_1-0-0",
        ".f-0_20250101000000000.log.10_0-0-0",
        ".f-0_20250102000000000.log.1_0-0-0",
    ]


# -- bad names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "",
        "foo.parquet",
        "abc_1-2-3.parquet",  # no instant
        "part-00000-1a2b.snappy.parquet",  # a plain Spark file
        ".hoodie_partition_metadata",
        ".hoodie_partition_metadata.parquet",
        ".DS_Store",
        "abc_1-2-3_20250101000000000",  # no extension
        "abc_1-2-3_20250101000000000.",
        "abc_1-2-3_2025010100000000x.parquet",
        "a b_1-2-3_20250101000000000.parquet",
        "abc_1-2-3_20250101000000000.parquet.crc",
        ".abc_20250101000000000.log.1_0-0-0",  # a log file
    ],
)
def test_bad_base_file_names_are_rejected(name):
    assert BaseFileName.try_parse(name) is None
    with pytest.raises(InvalidTableError, match="base file name"):
        BaseFileName.parse(name)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "abc_20250101000000000.log.1_0-0-0",  # no leading dot
        ".abc_20250101000000000.log",  # no version
        ".abc_20250101000000000.log.x_0-0-0",
        ".abc_20250101000000000.log.1_0-0",
        ".abc_20250101000000000.log.1_0-0-0-0",
        ".abc.log.1_0-0-0",  # no instant separator
        ".abc_20250101000000000.log.1_0-0-0.crc",
        ".hoodie_partition_metadata",
        ".DS_Store",
        "abc_1-2-3_20250101000000000.parquet",  # a base file
    ],
)
def test_bad_log_file_names_are_rejected(name):
    assert LogFileName.try_parse(name) is None
    with pytest.raises(InvalidTableError, match="log file name"):
        LogFileName.parse(name)
