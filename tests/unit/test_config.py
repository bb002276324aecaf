"""Typed hoodie.* options: Hudi's names, aliases and defaults, the documented precedence, and bad values that fail
up front with the key, the value and the fix."""

from __future__ import annotations

import pytest

from hudi_ops.config import (
    HoodieConfig,
    TableConfigKeys,
    WriteConfig,
    command_line_options,
    load_props_file,
    parse_key_values,
)
from hudi_ops.errors import ConfigError


def test_aliases_and_precedence():
    base = HoodieConfig({"hoodie.datasource.write.table.name": "trips"})
    assert base.get(WriteConfig.TABLE_NAME) == "trips"  # Hudi's older name still counts
    assert base.merged({"hoodie.table.name": "rides"}).get(WriteConfig.TABLE_NAME) == "rides"  # the key wins
    assert base.get(WriteConfig.LOCK_WAIT_MS) == 60_000  # Hudi's default
    assert base.get(TableConfigKeys.PRECOMBINE_FIELD) is None
    # v9 tables store the ordering field under its new name
    assert HoodieConfig({"hoodie.table.ordering.fields": "ts"}).get(TableConfigKeys.PRECOMBINE_FIELD) == "ts"
    # later mappings win over earlier ones; the original is left as it was
    layered = base.merged({"hoodie.write.lock.wait_time_ms": "1000"}, None, {"hoodie.write.lock.wait_time_ms": "5"})
    assert layered.get(WriteConfig.LOCK_WAIT_MS) == 5
    assert base.get(WriteConfig.LOCK_WAIT_MS) == 60_000
    assert HoodieConfig({"hoodie.write.lock.wait_time_ms": ""}).get(WriteConfig.LOCK_WAIT_MS) == 60_000


@pytest.mark.parametrize(("key", "value", "message"), [
    (WriteConfig.LOCK_WAIT_MS, "-1", "at least 0"),
    (WriteConfig.LOCK_WAIT_MS, "ten", "not valid"),
    (TableConfigKeys.TYPE, "cow", "use one of COPY_ON_WRITE, MERGE_ON_READ"),
    (TableConfigKeys.POPULATE_META_FIELDS, "maybe", "true or false"),
    (TableConfigKeys.VERSION, "8.0", "not valid"),
])
def test_bad_values_name_the_key_the_value_and_the_fix(key, value, message):
    with pytest.raises(ConfigError, match=message) as err:
        HoodieConfig({key.name: value}).get(key)
    assert key.name in str(err.value) and repr(value) in str(err.value)


def test_typed_values():
    config = HoodieConfig({
        "hoodie.table.type": "merge_on_read",
        "hoodie.populate.meta.fields": "FALSE",
        "hoodie.table.recordkey.fields": " id, name ,",
        "hoodie.table.version": "9",
    })
    assert config.get(TableConfigKeys.TYPE) == "MERGE_ON_READ"
    assert config.get(TableConfigKeys.POPULATE_META_FIELDS) is False
    assert config.get(TableConfigKeys.RECORD_KEY_FIELDS) == ("id", "name")
    assert config.get(TableConfigKeys.PARTITION_FIELDS) == ()
    assert config.get(TableConfigKeys.VERSION) == 9
    assert config.require(TableConfigKeys.VERSION) == 9
    with pytest.raises(ConfigError, match=r"hoodie.table.name is required: set it with --hoodie-conf"):
        config.require(TableConfigKeys.NAME)


def test_key_values_from_the_command_line():
    assert parse_key_values(["a=1", " b = x=y ", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    for bad in ("hoodie.table.name", "=value"):
        with pytest.raises(ConfigError, match="is not key=value") as err:
            parse_key_values([bad])
        assert repr(bad) in str(err.value)


def test_props_file_then_hoodie_conf(tmp_path):
    props = tmp_path / "job.props"
    props.write_text("# comment\n! also a comment\n\nhoodie.table.name = trips\nhoodie.write.lock.wait_time_ms=10\n")
    assert load_props_file(props.read_text()) == {"hoodie.table.name": "trips", "hoodie.write.lock.wait_time_ms": "10"}
    options = command_line_options(str(props), ["hoodie.write.lock.wait_time_ms=20"])
    assert options == {"hoodie.table.name": "trips", "hoodie.write.lock.wait_time_ms": "20"}  # --hoodie-conf wins
    assert command_line_options(None, []) == {}
    with pytest.raises(ConfigError, match=r"cannot read --props .*nope.props"):
        command_line_options(str(tmp_path / "nope.props"), [])
