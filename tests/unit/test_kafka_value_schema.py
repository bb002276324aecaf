"""The Avro schema of a Kafka ingest's values: named by HoodieStreamer's file-based schema provider's
option, read from a local file or an S3 URI, and refused with the fix when it cannot be the rows'."""

from __future__ import annotations

import json

import pytest

from hudi_ops.errors import InvalidInputError
from hudi_ops.options.keys import StreamerConfig
from hudi_ops.sources.kafka import read_value_schema, value_schema_file

KEY = StreamerConfig.SOURCE_SCHEMA_FILE.name
TRIP = {"type": "record", "name": "Trip", "fields": [{"name": "trip_id", "type": "string"}]}


def test_json_values_need_no_schema_and_avro_values_name_theirs():
    assert value_schema_file({}, "json") is None
    assert value_schema_file({KEY: " /s/trip.avsc "}, "confluent_avro") == "/s/trip.avsc"
    with pytest.raises(InvalidInputError, match=f"avro values needs their Avro schema: give the option {KEY}=PATH"):
        value_schema_file({}, "avro")


def test_a_record_schema_is_read_and_anything_else_is_refused_naming_the_file(tmp_path):
    good = tmp_path / "trip.avsc"
    good.write_text(json.dumps(TRIP))
    assert json.loads(read_value_schema(str(good))) == TRIP
    assert json.loads(read_value_schema(good.as_uri())) == TRIP  # a file:// URI reads the same file
    for text, says in (('"string"', "not a record schema"), ("{not json", "is not JSON"),
                       (json.dumps({**TRIP, "fields": []}), "not a record schema")):
        bad = tmp_path / "bad.avsc"
        bad.write_text(text)
        with pytest.raises(InvalidInputError, match=says) as refused:
            read_value_schema(str(bad))
        assert str(bad) in str(refused.value)
    for missing in (str(tmp_path / "none.avsc"), "nosuchscheme://x/trip.avsc"):
        with pytest.raises(InvalidInputError, match=f"{KEY}={missing} cannot be read"):
            read_value_schema(missing)
    latin = tmp_path / "latin.avsc"
    latin.write_bytes(b"\xff\xfe")
    with pytest.raises(InvalidInputError, match="cannot be read"):
        read_value_schema(str(latin))
