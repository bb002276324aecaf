"""hoodie.properties: Java Properties text, every fixture table, the v8 key set, errors, backup protocol."""

from __future__ import annotations

import logging
import random
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hudi_ops.config import TableConfigKeys
from hudi_ops.errors import (
    ConfigError,
    InvalidTableError,
    StorageError,
    TableExistsError,
    TableNotFoundError,
)
from hudi_ops.format.table_properties import (
    BACKUP_FILE,
    PROPERTIES_FILE,
    TableProperties,
    check_writable_v8,
    checksum,
    format_properties,
    java_instant,
    parse_properties,
)
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


# -- Java Properties text ----------------------------------------------------------------------------


def test_parse_follows_java_properties_load() -> None:
    text = (
        "# comment\n"
        "! also a comment \\\n"
        "   \n"
        "a=1\n"
        "b:2\n"
        "c 3\n"
        "  d   =   4  \n"
        "e\t:\tfive\n"
        "f\n"
        "g=\n"
        "h=x\\:y\\=z\\\\w\\#\\!\n"
        "i=tab\\there\\nnl\\rcr\\fff\n"
        "j=\\u00e9\\u00C9\\uD83D\\uDE00\n"
        "k\\ with\\ spaces = v\n"
        "l=line one \\\n"
        "      continued \\\n"
        "   end\n"
        "m=ends with escaped backslash\\\\\n"
        "n=after\r\n"
        "o==starts with equals\r"
        "p=\\q\\z\n"
        "a=last wins\n"
        "q=eof continuation\\"
    )
    assert parse_properties(text) == {
        "a": "last wins",
        "b": "2",
        "c": "3",
        "d": "4  ",
        "e": "five",
        "f": "",
        "g": "",
        "h": "x:y=z\\w#!",
        "i": "tab\there\nnl\rcr\fff",
        "j": "éÉ😀",
        "k with spaces": "v",
        "l": "line one continued end",
        "m": "ends with escaped backslash\\",
        "n": "after",
        "o": "=starts with equals",
        "p": "qz",
        "q": "eof continuation",
    }


def test_continuation_ends_at_an_empty_line_and_comments_do_not_continue() -> None:
    assert parse_properties("a=1\\\n\nb=2\n#c=3\\\nd=4") == {"a": "1", "b": "2", "d": "4"}


def test_malformed_unicode_escape_is_rejected() -> None:
    with pytest.raises(InvalidTableError, match=r"uXXXX"):
        parse_properties("a=\\u12G4")


def test_format_escapes_like_java_store() -> None:
    t = datetime(2025, 7, 13, 1, 1, 15, 180328, tzinfo=UTC)
    text = format_properties(
        {"a b": " lead=x:y#z!w\\v\tt\nn", "uni": "é😀", "ctl": "\x01\x7f", "sp": "in side "}, header_time=t
    )
    assert text.splitlines() == [
        "#Properties saved on 2025-07-13T01:01:15.180328Z",
        "#Sun Jul 13 01:01:15 UTC 2025",
        "a\\ b=\\ lead\\=x\\:y\\#z\\!w\\\\v\\tt\\nn",
        "uni=\\u00E9\\uD83D\\uDE00",
        "ctl=\\u0001\\u007F",
        "sp=in side ",
    ]


def test_header_comment_and_time_zone() -> None:
    t = datetime(2024, 5, 10, 11, 20, 8, 106000).astimezone()  # local time: printed in UTC
    lines = format_properties({}, header_time=t, comment="partition metadata").splitlines()
    assert lines[0] == "#partition metadata"
    assert lines[1].endswith(f" UTC {t.astimezone(UTC).year}")


@pytest.mark.parametrize(
    ("micros", "text"),
    [
        (0, "2025-07-13T01:01:15Z"),
        (106000, "2025-07-13T01:01:15.106Z"),
        (180328, "2025-07-13T01:01:15.180328Z"),
    ],
)
def test_java_instant(micros: int, text: str) -> None:
    assert java_instant(datetime(2025, 7, 13, 1, 1, 15, micros, tzinfo=UTC)) == text


def test_random_round_trip() -> None:
    rng = random.Random(7)
    alphabet = "ab =:#!\\\t\n\r\f\x00é€😀\u2028"
    for _ in range(300):
        values = {
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))):
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
            for _ in range(3)
        }
        text = format_properties(values, header_time=datetime.now(UTC))
        assert text.isascii()
        assert parse_properties(text) == values


def test_java_written_file_is_reproduced_byte_for_byte(tables: dict[str, Path]) -> None:
    path = tables["sample_table/cow/v8_complexkeygen_hivestyle"] / ".hoodie/hoodie.properties"
    original = path.read_text()
    assert original.startswith("#Properties saved on 2025-07-13T01:01:15.180328Z\n")
    t = datetime(2025, 7, 13, 1, 1, 15, 180328, tzinfo=UTC)
    assert format_properties(parse_properties(original), header_time=t) == original


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
        modes = {"CUSTOM"} if key.endswith("/metadata") else {"EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"}
        assert props.merge_mode in modes, key


def test_checksum_examples() -> None:
    assert checksum("default", "v6_trips_8i3d") == 3180720914
    assert checksum(None, "v8_trips_8i3u1d_metadata") == 380169000
    assert checksum("", "trips") == 3761586722


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("quickstart_trips_table/mor/avro/v6_trips_8i3d", dict(
            table_type="MERGE_ON_READ", table_version=6, timeline_path=".hoodie", record_key_fields=("uuid",),
            partition_fields=("city",), ordering_field="ts", keygen_type="SIMPLE",
            merge_mode="COMMIT_TIME_ORDERING", hive_style_partitioning=True, timezone="LOCAL")),
        ("sample_table/cow/v6_complexkeygen_hivestyle", dict(
            table_version=6, keygen_type="COMPLEX", partition_fields=("byteField", "shortField"),
            record_key_fields=("id", "name"), merge_mode="EVENT_TIME_ORDERING", database="default")),
        ("sample_table/cow/v6_timebasedkeygen_nonhivestyle", dict(
            keygen_type="TIMESTAMP", hive_style_partitioning=False, url_encode_partitioning=False)),
        ("sample_table/cow/v8_empty", dict(
            table_version=8, timeline_path=".hoodie/timeline", ordering_field=None,
            keygen_type="NON_PARTITION", partition_fields=(), merge_mode="COMMIT_TIME_ORDERING",
            metadata_partitions=())),
        ("sample_table/cow/v8_simplekeygen_hivestyle_no_metafields", dict(
            populate_meta_fields=False, merge_mode="EVENT_TIME_ORDERING", ordering_field="longField")),
        ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d", dict(metadata_partitions=(
            "column_stats", "files", "partition_stats", "record_index", "secondary_index_rider_idx"))),
        ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d/metadata", dict(
            table_name="v8_trips_8i3u1d_metadata", database=None, merge_mode="CUSTOM",
            keygen_type="HOODIE_TABLE_METADATA", populate_meta_fields=False)),
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
        "hoodie.table.timeline.timezone": "utc",
        "hoodie.table.keygenerator.class": "com.example.MyKeyGen",
        "hoodie.compaction.payload.class": "x.Custom",
        "hoodie.table.precombine.field": "a,b",
    })
    assert props.table_type == "MERGE_ON_READ"
    assert props.timeline_path == ".hoodie/tl"
    assert props.partition_fields == ("region", "ts")
    assert props.timezone == "UTC"
    assert props.keygen_type == "USER_PROVIDED"
    assert props.merge_mode == "CUSTOM"
    with pytest.raises(InvalidTableError, match=r"several fields"):
        _ = props.ordering_field
    assert props.as_config().get(TableConfigKeys.NAME) == "t"


@pytest.mark.parametrize(
    ("payload", "ordering", "mode"),
    [
        ("org.apache.hudi.common.model.DefaultHoodieRecordPayload", "ts", "EVENT_TIME_ORDERING"),
        ("org.apache.hudi.common.model.OverwriteWithLatestAvroPayload", "ts", "COMMIT_TIME_ORDERING"),
        (None, "ts", "EVENT_TIME_ORDERING"),
        (None, None, "COMMIT_TIME_ORDERING"),
        ("org.apache.hudi.common.model.DefaultHoodieRecordPayload", None, "COMMIT_TIME_ORDERING"),
    ],
)
def test_v6_merge_mode_inference(payload: str | None, ordering: str | None, mode: str) -> None:
    v = {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.version": "6"}
    if payload:
        v["hoodie.compaction.payload.class"] = payload
    if ordering:
        v["hoodie.table.precombine.field"] = ordering
    assert TableProperties(v).merge_mode == mode


# -- errors ------------------------------------------------------------------------------------------


def test_core_test_data_properties() -> None:
    minimum = load(CORE / "table_props_valid_minimum")
    assert (minimum.table_type, minimum.table_version, minimum.timezone) == ("COPY_ON_WRITE", 6, "LOCAL")
    assert minimum.keygen_type is None
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
    v = dict(new_table().values)
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
    storage = Storage.for_uri(tmp_path)
    good = new_table()
    good.store(storage, create=True)
    text = storage.read_bytes(PROPERTIES_FILE)
    storage.delete_file(PROPERTIES_FILE)
    storage.write_bytes(BACKUP_FILE, text)
    assert TableProperties.load(storage) == good
    storage.write_bytes(PROPERTIES_FILE, text.replace(b"hoodie.table.name=trips", b"hoodie.table.name=other"))
    assert TableProperties.load(storage) == good
    storage.delete_file(BACKUP_FILE)
    with pytest.raises(InvalidTableError, match=r"hoodie.properties: hoodie.table.checksum=\d+ does not"):
        TableProperties.load(storage)


# -- new tables --------------------------------------------------------------------------------------


def new_table(**kw: object) -> TableProperties:
    args: dict[str, object] = dict(
        table_name="trips", table_type="COPY_ON_WRITE", record_key_fields=["uuid"], partition_fields=["city"],
        ordering_field="ts",
    )
    args.update(kw)
    return TableProperties.for_new_table(**args)  # type: ignore[arg-type]


def test_for_new_table_writes_the_v8_key_set() -> None:
    props = new_table(hive_style=True, create_schema='{"type":"record","name":"trips_record","fields":[]}')
    assert props.values == {
        "hoodie.table.name": "trips",
        "hoodie.table.type": "COPY_ON_WRITE",
        "hoodie.table.version": "8",
        "hoodie.table.initial.version": "8",
        "hoodie.timeline.layout.version": "2",
        "hoodie.timeline.path": "timeline",
        "hoodie.timeline.history.path": "history",
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.recordkey.fields": "uuid",
        "hoodie.table.partition.fields": "city",
        "hoodie.table.keygenerator.type": "SIMPLE",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.table.precombine.field": "ts",
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        "hoodie.record.merge.strategy.id": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
        "hoodie.compaction.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.database.name": "default",
        "hoodie.table.create.schema": '{"type":"record","name":"trips_record","fields":[]}',
        "hoodie.table.checksum": str(checksum("default", "trips")),
    }
    assert list(props.values)[-1] == "hoodie.table.checksum"
    check_writable_v8(props)


def test_for_new_table_commit_time_and_inferred_key_generators() -> None:
    props = new_table(partition_fields=[], ordering_field=None, table_type="merge_on_read", database="db")
    assert props.values["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    assert props.values["hoodie.record.merge.strategy.id"] == "ce9acb64-bde0-424c-9b91-f6ebba25356d"
    assert props.values["hoodie.compaction.payload.class"].endswith("OverwriteWithLatestAvroPayload")
    assert "hoodie.table.precombine.field" not in props.values
    assert "hoodie.table.partition.fields" not in props.values
    assert props.keygen_type == "NON_PARTITION"
    assert props.table_type == "MERGE_ON_READ"
    assert props.values["hoodie.table.checksum"] == str(checksum("db", "trips"))
    assert new_table(record_key_fields=["id", "name"]).keygen_type == "COMPLEX"
    assert new_table(record_key_fields="id, name").record_key_fields == ("id", "name")
    assert new_table(partition_fields=["a", "b"]).keygen_type == "COMPLEX"
    assert new_table(keygen_type="timestamp").keygen_type == "TIMESTAMP"
    kept = new_table(merge_mode="COMMIT_TIME_ORDERING")
    assert (kept.merge_mode, kept.ordering_field) == ("COMMIT_TIME_ORDERING", "ts")


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(ordering_field=None, merge_mode="EVENT_TIME_ORDERING"), "EVENT_TIME_ORDERING needs an"),
        (dict(merge_mode="CUSTOM"), "merge mode 'CUSTOM' is not valid"),
        (dict(table_name="my-table"), "table name 'my-table' is not valid"),
        (dict(database="1db"), "database '1db' is not valid"),
        (dict(table_type="cow"), "use COPY_ON_WRITE or MERGE_ON_READ"),
        (dict(record_key_fields=[]), "needs a record key field"),
        (dict(record_key_fields=["id,name"]), "field 'id,name' is not a valid column name"),
        (dict(partition_fields=["city:SIMPLE"]), "field 'city:SIMPLE'"),
        (dict(ordering_field="a b"), "field 'a b'"),
        (dict(keygen_type="FANCY"), "key generator type 'FANCY' is not valid"),
        (dict(create_schema="{not json"), "create_schema is not JSON"),
    ],
)
def test_for_new_table_rejects_bad_input(kw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        new_table(**kw)


def test_updated_copies_and_keeps_the_checksum_right() -> None:
    props = new_table()
    renamed = props.updated(**{"hoodie.table.name": "rides", "hoodie.table.precombine.field": None})
    assert renamed.table_name == "rides"
    assert renamed.ordering_field is None
    assert renamed.values["hoodie.table.checksum"] == str(checksum("default", "rides"))
    assert props.table_name == "trips"
    assert hash(props) == hash(new_table()) and props == new_table() and props != renamed
    with pytest.raises(InvalidTableError, match=r"table versions 6, 8 and 9"):
        props.updated(**{"hoodie.table.version": "5"})


# -- storing -----------------------------------------------------------------------------------------


def test_store_create_and_update_with_the_backup_protocol(tmp_path: Path) -> None:
    storage = Storage.for_uri(tmp_path)
    props = new_table()
    props.store(storage, create=True)
    text = (tmp_path / ".hoodie/hoodie.properties").read_text()
    assert text.startswith("#Properties saved on ")
    assert text.splitlines()[1].endswith(f" UTC {datetime.now(UTC).year}")
    assert text.splitlines()[-1].startswith("hoodie.table.checksum=")
    assert TableProperties.load(storage) == props
    with pytest.raises(TableExistsError):
        props.store(storage, create=True)

    changed = props.updated(**{"hoodie.table.metadata.partitions": ""})
    changed.store(storage, create=False)
    assert (tmp_path / ".hoodie/hoodie.properties").read_text().startswith("#Updated at ")
    assert not (tmp_path / ".hoodie/hoodie.properties.backup").exists()
    assert TableProperties.load(storage) == changed


def test_update_recovers_a_main_file_lost_mid_update(tmp_path: Path) -> None:
    storage = Storage.for_uri(tmp_path)
    props = new_table()
    props.store(storage, create=True)
    (tmp_path / ".hoodie/hoodie.properties").rename(tmp_path / ".hoodie/hoodie.properties.backup")
    props.updated(**{"hoodie.datasource.write.hive_style_partitioning": "true"}).store(storage, create=False)
    assert TableProperties.load(storage).hive_style_partitioning is True
    assert not (tmp_path / ".hoodie/hoodie.properties.backup").exists()
    with pytest.raises(TableNotFoundError):
        props.store(Storage.for_uri(tmp_path / "elsewhere"), create=False)


class _CorruptingStorage(Storage):
    """Returns a damaged hoodie.properties on the verification read after writing it."""

    def write_bytes(self, rel: str, data: bytes) -> None:
        super().write_bytes(rel, data)
        self.corrupt = rel == PROPERTIES_FILE

    def read_bytes(self, rel: str) -> bytes:
        data = super().read_bytes(rel)
        if rel == PROPERTIES_FILE and getattr(self, "corrupt", False):
            return data.replace(b"hoodie.table.checksum", b"truncated")
        return data


def test_failed_verification_leaves_readers_on_the_backup(tmp_path: Path) -> None:
    props = new_table()
    props.store(Storage.for_uri(tmp_path), create=True)
    storage = _CorruptingStorage(Storage.for_uri(tmp_path).fs, str(tmp_path), str(tmp_path))
    with pytest.raises(StorageError, match=r"did not read back with its checksum"):
        props.updated(**{"hoodie.table.precombine.field": "fare"}).store(storage, create=False)
    assert not (tmp_path / ".hoodie/hoodie.properties").exists()
    assert TableProperties.load(Storage.for_uri(tmp_path)) == props


# -- writability -------------------------------------------------------------------------------------


def test_check_writable_v8(tables: dict[str, Path]) -> None:
    spark_written = load(tables["sample_table/cow/v8_complexkeygen_hivestyle"])
    with pytest.raises(InvalidTableError, match=r"timezone=LOCAL.*set hoodie.table.timeline.timezone=UTC"):
        check_writable_v8(spark_written)  # Java's default zone is the JVM's, which need not be UTC
    check_writable_v8(spark_written.updated(**{"hoodie.table.timeline.timezone": "UTC"}))
    with pytest.raises(InvalidTableError, match=r"hoodie.metadata.enable=false"):
        check_writable_v8(load(tables["quickstart_trips_table/mor/avro/v8_trips_8i3u1d"]))
    with pytest.raises(InvalidTableError, match=r"hoodie.write.table.version=8"):
        check_writable_v8(load(tables["sample_table/cow/v9_txns_simple_nometa"]))
    with pytest.raises(InvalidTableError, match=r"version 6"):
        check_writable_v8(load(tables["sample_table/cow/v6_nonpartitioned"]))
    with pytest.raises(InvalidTableError, match=r"partitions files"):
        check_writable_v8(new_table().updated(**{"hoodie.table.metadata.partitions.inflight": "files"}))
