"""hoodie.properties as Hudi writes it: every fixture table, typed accessors, errors, and the reader's side of
Hudi's backup protocol. (`config.parse_properties` reads its Java Properties text; test_config tests that.)"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from hudi_ops.errors import EXIT_CONFLICT, InvalidTableError, TableBeingCreatedError, TableNotFoundError, exit_code
from hudi_ops.format.table_properties import BACKUP_FILE, PROPERTIES_FILE, TableProperties, checksum
from hudi_ops.options.properties_file import parse_properties
from hudi_ops.storage import Storage
from tests.shared_data import FIXTURES

CORE = FIXTURES / "core-tests-data"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Base path of every fixture table and metadata table, keyed `<zip stem>` / `<zip stem>/metadata`."""
    out: dict[str, Path] = {}
    for i, zip_path in enumerate(sorted(FIXTURES.rglob("*.zip"))):
        dest = tmp_path_factory.mktemp(f"t{i}")
        unzip = ["unzip", "-q", str(zip_path), "-x", "__MACOSX/*", "-d", str(dest)]
        subprocess.run(unzip, check=True, capture_output=True)
        key = str(zip_path.relative_to(FIXTURES).with_suffix(""))
        for props in dest.rglob("hoodie.properties"):
            if props.parent.name != ".hoodie":
                continue
            root = props.parent.parent
            out[f"{key}/metadata" if root.name == "metadata" else key] = root
    return out


def load(root: Path) -> TableProperties:
    return TableProperties.load(Storage.for_uri(root))


#: the keys Hudi 1.0 writes for a new table version 8 (as in the v8 fixtures)
V8 = {
    "hoodie.table.name": "trips",
    "hoodie.table.type": "COPY_ON_WRITE",
    "hoodie.table.version": "8",
    "hoodie.table.initial.version": "8",
    "hoodie.timeline.layout.version": "2",
    "hoodie.timeline.path": "timeline",
    "hoodie.table.recordkey.fields": "uuid",
    "hoodie.table.partition.fields": "city",
    "hoodie.table.precombine.field": "ts",
    "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
    "hoodie.database.name": "default",
    "hoodie.table.checksum": str(checksum("default", "trips")),
}


def properties_text(values: dict[str, str]) -> bytes:
    """Values that need no escaping, one `key=value` line each, as Java's `Properties.store` writes them."""
    return ("#Updated at 2025-07-13T01:01:15.180328Z\n" + "".join(f"{k}={v}\n" for k, v in values.items())).encode()


# -- every fixture -----------------------------------------------------------------------------------


def test_every_fixture_table_loads_with_a_valid_checksum(tables: dict[str, Path]) -> None:
    assert len(tables) >= 60  # 47 tables plus their metadata tables
    for key, root in tables.items():
        raw = parse_properties((root / ".hoodie/hoodie.properties").read_text())
        props = load(root)
        assert dict(props.values) == raw
        assert props.table_version in (6, 8, 9), key
        assert props.timeline_layout_version == (1 if props.table_version == 6 else 2), key
        stored = int(raw["hoodie.table.checksum"])
        assert stored == checksum(raw.get("hoodie.database.name"), props.table_name), key
        assert props.create_schema is None or props.create_schema.startswith('{"type":"record"')


def test_checksum_examples() -> None:
    assert checksum("default", "v6_trips_8i3d") == 3180720914
    assert checksum(None, "v8_trips_8i3u1d_metadata") == 380169000
    assert checksum("", "trips") == 3761586722


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("quickstart_trips_table/mor/avro/v6_trips_8i3d", dict(
            table_type="MERGE_ON_READ", table_version=6, timeline_path=".hoodie", history_path=None,
            record_key_fields=("uuid",), partition_fields=("city",), ordering_field="ts")),
        ("sample_table/cow/v6_complexkeygen_hivestyle", dict(
            table_version=6, partition_fields=("byteField", "shortField"), record_key_fields=("id", "name"),
            database="default")),
        ("sample_table/cow/v8_empty", dict(
            table_version=8, timeline_path=".hoodie/timeline", history_path=".hoodie/timeline/history",
            ordering_field=None, partition_fields=(), metadata_partitions=())),
        ("sample_table/cow/v8_simplekeygen_hivestyle_no_metafields", dict(ordering_field="longField")),
        ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d", dict(metadata_partitions=(
            "column_stats", "files", "partition_stats", "record_index", "secondary_index_rider_idx"))),
        ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d/metadata", dict(
            table_name="v8_trips_8i3u1d_metadata", database=None)),
        ("sample_table/cow/v9_txns_simple_meta", dict(table_version=9, ordering_field="txn_ts")),
    ],
)
def test_typed_accessors(tables: dict[str, Path], table: str, expected: dict[str, object]) -> None:
    props = load(tables[table])
    assert {k: getattr(props, k) for k in expected} == expected


def test_accessors_of_hand_written_values() -> None:
    base = {"hoodie.table.name": "t", "hoodie.table.type": "cow_ignored", "hoodie.table.version": "8",
            "hoodie.timeline.layout.version": "2"}
    with pytest.raises(InvalidTableError, match=r"hoodie.table.type='cow_ignored'"):
        TableProperties(base)
    props = TableProperties({
        **base, "hoodie.table.type": "merge_on_read", "hoodie.timeline.path": "tl",
        "hoodie.table.partition.fields": "region:SIMPLE,ts:TIMESTAMP",
        "hoodie.table.precombine.field": "a,b",
    })
    assert props.table_type == "MERGE_ON_READ"
    assert props.timeline_path == ".hoodie/tl"
    assert props.partition_fields == ("region", "ts")
    with pytest.raises(InvalidTableError, match=r"several fields \(a,b\); hudi-ops' control plane compares one"):
        _ = props.ordering_field
    v9 = {**base, "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.ordering.fields": " fare "}
    assert TableProperties(v9).ordering_field == "fare"  # v9's name for the precombine field


# -- errors ------------------------------------------------------------------------------------------


def test_core_test_data_properties() -> None:
    minimum = load(CORE / "table_props_valid_minimum")
    assert (minimum.table_type, minimum.table_version, minimum.ordering_field) == ("COPY_ON_WRITE", 6, None)
    assert load(CORE / "table_props_no_create_schema").create_schema is None
    with pytest.raises(InvalidTableError, match=r"table_props_invalid/.*required key hoodie.table.name"):
        load(CORE / "table_props_invalid")
    invalid = {**parse_properties((CORE / "table_props_invalid/.hoodie/hoodie.properties").read_text()),
               "hoodie.table.name": "t"}
    with pytest.raises(InvalidTableError, match=r"hoodie.table.type='cow' is not valid; use one of"):
        TableProperties(invalid)
    with pytest.raises(InvalidTableError, match=r"hoodie.table.version='baz' is not valid"):
        TableProperties({**invalid, "hoodie.table.type": "COPY_ON_WRITE"})
    with pytest.raises(InvalidTableError, match=r"required key hoodie.table.type; add hoodie.table.type"):
        load(CORE / "table_props_partial")
    # database "db" but the checksum of ".trips": Java refuses this table, so do we
    with pytest.raises(InvalidTableError, match=r"checksum=3761586722 does not match .*2086522725"):
        load(CORE / "table_props_valid")
    with pytest.raises(InvalidTableError, match=r"lacks the required key hoodie.table.name"):
        load(CORE / "timeline/commits_stub")


def test_v6_without_layout_version_is_inferred_with_a_note(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        props = load(CORE / "timeline/commits_load_schema_from_base_file_cow")
    assert props.timeline_layout_version == 1
    assert props.timeline_path == ".hoodie"
    assert "hoodie.timeline.layout.version" in caplog.text


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"hoodie.table.version": "7"}, "table versions 6, 8 and 9"),
        ({"hoodie.table.version": "10"}, "hoodie.table.version=10 is not supported"),
        ({"hoodie.timeline.layout.version": None}, "lacks hoodie.timeline.layout.version.*add hoodie"),
        ({"hoodie.timeline.layout.version": "1"}, "set hoodie.timeline.layout.version=2"),
        ({"hoodie.table.name": None}, "add hoodie.table.name="),
        ({"hoodie.table.version": ""}, "lacks the required key hoodie.table.version"),
        ({"hoodie.table.checksum": "1"}, "set hoodie.table.checksum="),
    ],
)
def test_invalid_values_name_the_key_and_the_fix(changes: dict[str, str | None], message: str) -> None:
    v = dict(V8)
    for k, x in changes.items():
        if x is None:
            v.pop(k)
        else:
            v[k] = x
    with pytest.raises(InvalidTableError, match=message):
        TableProperties(v)


def test_missing_table(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match=r"hoodie.properties is missing"):
        load(tmp_path)


def test_backup_is_read_while_the_main_file_is_missing_or_damaged(tmp_path: Path) -> None:
    """Hudi updates hoodie.properties by writing the backup, then the main file, then deleting the backup:
    a reader in between must find a valid file."""
    storage = Storage.for_uri(tmp_path)
    main, backup = tmp_path / PROPERTIES_FILE, tmp_path / BACKUP_FILE
    main.parent.mkdir()
    good = TableProperties(V8)
    backup.write_bytes(properties_text(V8))
    assert TableProperties.load(storage) == good  # the main file is missing
    main.write_bytes(properties_text({**V8, "hoodie.table.name": "other"}))
    assert TableProperties.load(storage) == good  # the main file fails its checksum (half written)
    main.write_bytes(properties_text(V8)[:-3])
    assert TableProperties.load(storage) == good  # cut short inside the checksum, its last line
    updated = {**V8, "hoodie.table.precombine.field": "fare"}
    main.write_bytes(properties_text(updated))
    assert TableProperties.load(storage).ordering_field == "fare"  # a valid main file wins over the backup
    backup.unlink()
    main.write_bytes(properties_text({**V8, "hoodie.table.name": "other"}))
    with pytest.raises(InvalidTableError, match=r"hoodie.properties: hoodie.table.checksum=\d+ does not"):
        TableProperties.load(storage)


@pytest.mark.parametrize("cut", [0, 80], ids=["empty", "first keys"])
def test_a_properties_file_a_writer_is_still_creating_is_a_table_not_there_yet(tmp_path: Path, cut: int) -> None:
    """Hudi creates hoodie.properties by opening it and then writing it in one stream, the checksum last: a
    reader in that moment (a services check polling a table a first write is making) finds it empty (the
    CI's chaos run did) or cut short, and must take it for a table that does not exist yet, not for a damaged one."""
    text = properties_text(V8)
    assert text.rstrip().endswith(f"hoodie.table.checksum={V8['hoodie.table.checksum']}".encode())
    main = tmp_path / PROPERTIES_FILE
    main.parent.mkdir()
    main.write_bytes(text[:cut])
    assert cut == 0 or b"hoodie.table.name=" in text[:cut]  # some keys made it, not all of them
    with pytest.raises(TableBeingCreatedError, match=r"is being created: .*hoodie.properties is not yet whole") as e:
        load(tmp_path)
    assert isinstance(e.value, TableNotFoundError)  # what "is there work?" checks answer "no table yet" to
    assert exit_code(e.value) == EXIT_CONFLICT  # a job that meets it: another job at work, retried
    # the same file beside an instant was finished once and lost its end: damaged, not being created
    (tmp_path / ".hoodie/timeline").mkdir()
    (tmp_path / ".hoodie/timeline/20261125092701051.deltacommit.requested").write_bytes(b"")
    with pytest.raises(InvalidTableError, match=r"lacks") as e:
        load(tmp_path)
    assert not isinstance(e.value, TableNotFoundError)
