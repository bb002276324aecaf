"""Hudi's Avro table schemas read as Arrow: Spark's naming and shapes, checked against every fixture commit
(the data files it wrote) and against hudi-rs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.avro_schema import avro_to_arrow
from hudi_ops.options.properties_file import parse_properties
from tests.shared_data import FIXTURES

META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
               "_hoodie_file_name")


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Base paths of every fixture table (metadata tables excluded)."""
    out = []
    for i, zip_path in enumerate(sorted(FIXTURES.rglob("*.zip"))):
        dest = tmp_path_factory.mktemp(f"t{i}")
        unzip = ["unzip", "-q", str(zip_path), "-x", "__MACOSX/*", "-d", str(dest)]
        subprocess.run(unzip, check=True, capture_output=True)
        out += [p.parent.parent for p in dest.rglob("hoodie.properties")
                if p.parent.name == ".hoodie" and p.parent.parent.name != "metadata"]
    return out


def commit_schemas(root: Path) -> list[tuple[str, str]]:
    """(requested time, extraMetadata.schema) of every completed layout-2 commit that records a schema."""
    out = []
    for path in sorted((root / ".hoodie/timeline").glob("*_*.*commit")):
        with path.open("rb") as f:
            record = next(fastavro.reader(f))
        schema = (record.get("extraMetadata") or {}).get("schema")
        if schema:
            out.append((path.name.split("_")[0], schema))
    return out


def nullable(name: str, t: object) -> dict[str, object]:
    return {"name": name, "type": ["null", t], "default": None}


# -- the shapes Spark's Hudi writer records ----------------------------------------------------------


#: what Spark's Hudi writer records for table `t`: nested records and decimal `fixed` types named after their
#: field, in a namespace nested per record level (two `fixed` types share the name "fixed")
SPARK_SCHEMA = {
    "type": "record", "name": "t_record", "namespace": "hoodie.t",
    "fields": [
        nullable("id", "int"), nullable("b", "boolean"), nullable("l", "long"), nullable("f", "float"),
        nullable("d", "double"), nullable("s", "string"), nullable("bin", "bytes"),
        nullable("day", {"type": "int", "logicalType": "date"}),
        nullable("ts", {"type": "long", "logicalType": "timestamp-micros"}),
        nullable("dec", {"type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.dec", "size": 5,
                         "logicalType": "decimal", "precision": 10, "scale": 5}),
        nullable("st", {"type": "record", "name": "st", "namespace": "hoodie.t.t_record", "fields": [
            nullable("inner", {"type": "record", "name": "inner", "namespace": "hoodie.t.t_record.st", "fields": [
                nullable("x", {"type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.st.inner.x",
                               "size": 2, "logicalType": "decimal", "precision": 4, "scale": 2}),
            ]}),
        ]}),
        nullable("arr", {"type": "array", "items": ["null", {
            "type": "record", "name": "arr", "namespace": "hoodie.t.t_record", "fields": [nullable("a", "string")]}]}),
        nullable("m", {"type": "map", "values": ["null", {
            "type": "record", "name": "m", "namespace": "hoodie.t.t_record", "fields": [nullable("v", "double")]}]}),
    ],
}


def test_spark_shaped_schema_reads_as_arrow() -> None:
    expected = pa.schema([
        ("id", pa.int32()), ("b", pa.bool_()), ("l", pa.int64()), ("f", pa.float32()), ("d", pa.float64()),
        ("s", pa.string()), ("bin", pa.binary()), ("day", pa.date32()), ("ts", pa.timestamp("us", tz="UTC")),
        ("dec", pa.decimal128(10, 5)),
        ("st", pa.struct([("inner", pa.struct([("x", pa.decimal128(4, 2))]))])),
        ("arr", pa.list_(pa.field("element", pa.struct([("a", pa.string())])))),
        ("m", pa.map_(pa.string(), pa.field("value", pa.struct([("v", pa.float64())])))),
    ])
    assert avro_to_arrow(SPARK_SCHEMA) == expected
    assert avro_to_arrow(json.dumps(SPARK_SCHEMA, separators=(",", ":"))) == expected  # as commits store it


# -- other Avro shapes -------------------------------------------------------------------------------


def test_create_schema_style_unions_and_other_avro_shapes() -> None:
    avro = {
        "type": "record", "name": "r", "namespace": "ns", "fields": [
            {"name": "a", "type": ["long", "null"]},
            {"name": "req", "type": "string"},
            {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "bdec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 1}},
            {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED"]}},
            {"name": "fx", "type": {"type": "fixed", "name": "Hash", "size": 16}},
            {"name": "again", "type": ["null", "Hash"]},
            {"name": "qualified", "type": "ns.Color"},
            {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "odd", "type": {"type": "int", "logicalType": "something-new"}},
            {"name": "items", "type": {"type": "array", "items": "int"}},
        ],
    }
    assert avro_to_arrow(avro) == pa.schema([
        pa.field("a", pa.int64()),
        pa.field("req", pa.string(), nullable=False),
        pa.field("local", pa.timestamp("us"), nullable=False),
        pa.field("ms", pa.timestamp("ms", tz="UTC"), nullable=False),
        pa.field("bdec", pa.decimal128(5, 1), nullable=False),
        pa.field("e", pa.string(), nullable=False),
        pa.field("fx", pa.binary(16), nullable=False),
        pa.field("again", pa.binary(16)),
        pa.field("qualified", pa.string(), nullable=False),
        pa.field("u", pa.string(), nullable=False),
        pa.field("odd", pa.int32(), nullable=False),
        pa.field("items", pa.list_(pa.field("element", pa.int32(), nullable=False)), nullable=False),
    ])


@pytest.mark.parametrize(
    ("avro", "message"),
    [
        ('{"type":"record","name":"r","fields":[{"name":"x","type":["null","int","string"]}]}', "union of several"),
        ('{"type":"record","name":"r","fields":[{"name":"x","type":"Missing"}]}', "unknown .* type 'Missing'"),
        ('{"type":"record","name":"r","fields":[{"name":"x","type":["null","r"]}]}', "recursive"),
        ('"string"', "must be an Avro record"),
    ],
)
def test_unreadable_avro_schemas(avro: str, message: str) -> None:
    with pytest.raises(InvalidTableError, match=message):
        avro_to_arrow(avro)


# -- fixtures ----------------------------------------------------------------------------------------


def _modern_lists(t: pa.DataType) -> pa.DataType:
    """Some of Spark's files use parquet-avro's legacy two-level lists (items named `array`, never null); the
    Avro schema, hudi-rs and we say nullable `element`."""
    if pa.types.is_list(t):
        item = t.value_field
        legacy = item.name == "array"
        return pa.list_(pa.field("element", _modern_lists(item.type), item.nullable or legacy))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_modern_lists(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_type, t.item_field.with_type(_modern_lists(t.item_type)))
    return t


def test_commit_schemas_match_the_base_files_they_wrote(tables: list[Path]) -> None:
    """For each commit, the Arrow schema we read from the Avro schema Spark recorded has the columns, in order and
    with the types, of the data columns of a base file that commit wrote (as pyarrow reads the file)."""
    compared = schemas = 0
    for root in tables:
        if not (root / ".hoodie/timeline").is_dir():
            continue
        for requested, text in commit_schemas(root):
            schemas += 1
            ours = avro_to_arrow(text)
            base = next(root.rglob(f"*_{requested}.parquet"), None)
            if base is None:
                continue
            compared += 1
            written = [f for f in pq.read_schema(base) if f.name not in META_FIELDS]
            assert ours.names == [f.name for f in written], (root.name, requested)
            assert [f.type for f in ours] == [_modern_lists(f.type) for f in written], (root.name, requested)
    assert schemas >= 150 and compared >= 100


def test_fixture_create_schemas_read_like_their_commit_schemas(tables: list[Path]) -> None:
    """Create schemas use `[type, "null"]` unions without defaults; they read as the same Arrow schema."""
    checked = 0
    for root in tables:
        create = parse_properties((root / ".hoodie/hoodie.properties").read_text()).get("hoodie.table.create.schema")
        if not create:
            continue
        schema = avro_to_arrow(create)
        assert len(schema) > 0
        commits = commit_schemas(root) if (root / ".hoodie/timeline").is_dir() else []
        if commits and json.loads(commits[0][1])["fields"][0]["name"] == json.loads(create)["fields"][0]["name"]:
            first = avro_to_arrow(commits[0][1])
            if first.names == schema.names:
                assert first == schema
                checked += 1
    assert checked >= 10


def test_arrow_from_fixture_matches_hudi_rs(tables: list[Path]) -> None:
    """hudi-rs reads the same Arrow schema from the table's Avro schema as we do."""
    import hudi

    root = next(t for t in tables if t.name == "v8_complexkeygen_hivestyle")
    expected = hudi.HudiTableBuilder.from_base_uri(str(root)).build().get_schema()
    ours = avro_to_arrow(commit_schemas(root)[-1][1])
    assert ours.names == expected.names
    assert [f.type for f in ours] == [f.type for f in expected]
