"""Typed hoodie.* options: Hudi's names, aliases and defaults, the documented precedence, and bad values that fail
up front with the key, the value and the fix. Also the Java Properties text of
hoodie.properties, and --props files as Hudi's utilities read them."""

from __future__ import annotations

import pytest

from hudi_ops.errors import ConfigError, InvalidTableError
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import LockConfig, TableConfigKeys, WriteConfig
from hudi_ops.options.properties_file import command_line_options, parse_key_values, parse_properties


def test_aliases_and_precedence():
    base = HoodieConfig({"hoodie.datasource.write.table.name": "trips"})
    assert base.get(WriteConfig.TABLE_NAME) == "trips"  # Hudi's older name still counts
    assert base.with_values(**{"hoodie.table.name": "rides"}).get(WriteConfig.TABLE_NAME) == "rides"  # the key wins
    assert base.get(LockConfig.WAIT_MS) == 60_000  # Hudi's default
    assert base.get(TableConfigKeys.PRECOMBINE_FIELD) is None
    # v9 tables store the ordering field under its new name
    assert HoodieConfig({"hoodie.table.ordering.fields": "ts"}).get(TableConfigKeys.PRECOMBINE_FIELD) == "ts"
    # given values win; the original is left as it was
    assert base.with_values(**{"hoodie.write.lock.wait_time_ms": "5"}).get(LockConfig.WAIT_MS) == 5
    assert base.get(LockConfig.WAIT_MS) == 60_000
    assert HoodieConfig({"hoodie.write.lock.wait_time_ms": ""}).get(LockConfig.WAIT_MS) == 60_000


@pytest.mark.parametrize(("key", "value", "message"), [
    (LockConfig.WAIT_MS, "-1", "at least 0"),
    (LockConfig.WAIT_MS, "ten", "not valid"),
    (TableConfigKeys.TYPE, "cow", "use one of COPY_ON_WRITE, MERGE_ON_READ"),
    (TableConfigKeys.VERSION, "8.0", "not valid"),
])
def test_bad_values_name_the_key_the_value_and_the_fix(key, value, message):
    with pytest.raises(ConfigError, match=message) as err:
        HoodieConfig({key.name: value}).get(key)
    assert key.name in str(err.value) and repr(value) in str(err.value)


def test_typed_values():
    config = HoodieConfig({
        "hoodie.table.type": "merge_on_read",
        "hoodie.table.recordkey.fields": " id, name ,",
        "hoodie.table.version": "9",
    })
    assert config.get(TableConfigKeys.TYPE) == "MERGE_ON_READ"
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
    props.write_text("# comment\n\nhoodie.table.name = trips  \nhoodie.write.lock.wait_time_ms=10\n"
                     "hoodie.datasource.write.keygenerator.class   org.apache.hudi.keygen.SimpleKeyGenerator\n"
                     "hoodie.streamer.source.dfs.root=s3://b/a\\.b\n")
    options = command_line_options(str(props), {})
    assert options == {"hoodie.table.name": "trips", "hoodie.write.lock.wait_time_ms": "10",  # values trimmed
                       # a line without `=` splits at its first blank, and backslashes stay, as in Hudi's reader
                       "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
                       "hoodie.streamer.source.dfs.root": "s3://b/a\\.b"}
    options = command_line_options(str(props), {"hoodie.write.lock.wait_time_ms": "20"})
    assert options["hoodie.write.lock.wait_time_ms"] == "20"  # --hoodie-conf wins
    assert command_line_options(None, {}) == {}
    with pytest.raises(ConfigError, match=r"cannot read --props .*nope.props"):
        command_line_options(str(tmp_path / "nope.props"), {})


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
