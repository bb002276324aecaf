"""Typed hoodie.* options: bad values fail up front with the key, the value and the fix; nothing is written."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from hudi_ops.cli import main
from hudi_ops.config import HoodieConfig, WriteConfig, parse_key_values
from hudi_ops.errors import ConfigError, InvalidTableError


@pytest.mark.parametrize(("key", "value", "message"), [
    ("hoodie.copyonwrite.record.size.estimate", "0", "at least 1"),
    ("hoodie.parquet.max.file.size", "-5", "at least 1"),
    ("hoodie.copyonwrite.insert.split.size", "0", "at least 1"),
    ("hoodie.parquet.small.file.limit", "-1", "at least 0"),
    ("hoodie.index.bloom.fpp", "1", "below 1"),
    ("hoodie.index.bloom.num_entries", "ten", "not valid"),
    ("hoodie.combine.before.upsert", "maybe", "true or false"),
    ("hoodie.index.type", "HBASE", "SIMPLE, BLOOM"),
])
def test_bad_write_options_are_refused_before_anything_is_written(tmp_path, key, value, message):
    table = HudiTable.create(tmp_path / "t", name="t", record_key="id")
    with pytest.raises(ConfigError, match=message) as err:
        table.upsert(pa.table({"id": [1]}), options={key: value})
    assert key in str(err.value)
    assert len(table.timeline()) == 0


def test_aliases_and_precedence():
    base = HoodieConfig({"hoodie.table.precombine.field": "ts"})
    assert base.get(WriteConfig.ORDERING_FIELD) == "ts"
    assert base.merged({"hoodie.datasource.write.precombine.field": "ts2"}).get(WriteConfig.ORDERING_FIELD) == "ts2"
    assert base.get(WriteConfig.PARQUET_MAX_FILE_SIZE) == 120 * 1024 * 1024  # Hudi's default
    with pytest.raises(ConfigError, match="key=value"):
        parse_key_values(["hoodie.table.name"])


def test_a_table_with_a_custom_merger_is_not_written(tmp_path):
    table = HudiTable.create(tmp_path / "t", name="t", record_key="id")
    table.properties.updated(**{"hoodie.record.merge.mode": "CUSTOM"}).store(table.meta.storage, create=False)
    with pytest.raises(InvalidTableError, match="CUSTOM"):
        HudiTable.open(table.base_path).upsert(pa.table({"id": [1]}))


def test_cli_refuses_a_folder_as_input(tmp_path, capsys):
    HudiTable.create(tmp_path / "t", name="t", record_key="id")
    (tmp_path / "in.csv").mkdir()
    assert main(["write", str(tmp_path / "t"), "--input", str(tmp_path / "in.csv")]) == 2
    assert "is not a file" in capsys.readouterr().err


@pytest.mark.parametrize(("key", "value", "message"), [
    ("hoodie.metadata.enable", "true", "metadata table"),
    ("hoodie.populate.meta.fields", "false", "meta fields"),
    ("hoodie.datasource.write.drop.partition.columns", "true", "partition columns"),
    ("hoodie.datasource.write.recordkey.field", "other", "differs from the table's id"),
    ("hoodie.datasource.write.precombine.field", "other", "differs from the table's ts"),
    ("hoodie.table.name", "another", "differs from the table's t"),
])
def test_options_contradicting_the_table_are_refused(tmp_path, key, value, message):
    table = HudiTable.create(tmp_path / "t", name="t", record_key="id", ordering_field="ts")
    with pytest.raises(ConfigError, match=message):
        table.upsert(pa.table({"id": [1], "ts": [1]}), options={key: value})
    table.upsert(pa.table({"id": [1], "ts": [1]}), options={"hoodie.datasource.write.recordkey.field": "id"})
    assert table.read(columns=["id"]).column("id").to_pylist() == [1]


def test_cli_takes_the_operation_from_hoodie_conf(tmp_path, capsys):
    HudiTable.create(tmp_path / "t", name="t", record_key="id")
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": 1}\n{"id": 1}\n')
    assert main(["write", str(tmp_path / "t"), "--input", str(src),
                 "--hoodie-conf", "hoodie.datasource.write.operation=bulk_insert"]) == 0
    assert '"operation": "BULK_INSERT"' in capsys.readouterr().out
