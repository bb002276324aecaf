"""Partition path values: Hive's escaping (as Java Hudi writes it) and parsing back for pruning."""

from __future__ import annotations

import hudi
import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from hudi_ops.format.partition_path import DEFAULT_PARTITION, escape_path_name, partition_values, unescape_path_name


@pytest.mark.parametrize(("raw", "escaped"), [
    ("New York", "New York"),            # Hive leaves spaces (a URL encoder would not)
    ("a/b", "a%2Fb"), ("a=b", "a%3Db"), ("50%", "50%25"), ("x:y", "x%3Ay"), ("q?", "q%3F"),
    ("[1]{2}^", "%5B1%5D%7B2}%5E"), ("tab\there", "tab%09here"), ("naïve-日本", "naïve-日本"),
    ("it's \"#*\\", "it%27s %22%23%2A%5C"),
])
def test_escaping_matches_hives_escape_path_name(raw, escaped):
    assert escape_path_name(raw) == escaped
    assert unescape_path_name(escaped) == raw


def test_partition_values_parse_paths_back():
    assert partition_values("city=a%3Db/day=1", ["city", "day"], hive_style=True, url_encoded=True) == {
        "city": "a=b", "day": "1"}
    assert partition_values("a=b", ["k"], hive_style=False, url_encoded=False) == {"k": "a=b"}
    assert partition_values(DEFAULT_PARTITION, ["k"], hive_style=False, url_encoded=False) == {"k": None}
    assert partition_values("2024/01/02", ["ts"], hive_style=False, url_encoded=False) is None  # formatted


@pytest.mark.parametrize("hive_style", [False, True])
@pytest.mark.parametrize("url_encode", [False, True])
def test_filters_on_awkward_partition_values_find_their_rows(tmp_path, hive_style, url_encode):
    table = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["k"], hive_style=hive_style)
    if url_encode:
        props = table.properties.updated(**{"hoodie.datasource.write.partitionpath.urlencode": "true"})
        props.store(table.meta.storage, create=False)
        table = HudiTable.open(table.base_path)
    values = ["a=b", "New York", "a/b", "x", None, ""]
    table.upsert(pa.table({"id": list(range(len(values))), "k": values}))
    for i, v in enumerate(values):
        if v is None:
            continue
        assert table.read(filters=[("k", "=", v)]).column("id").to_pylist() == [i], v
    rs = pa.Table.from_batches(hudi.HudiTable(table.base_path).read()).column("k").to_pylist()
    assert sorted(rs, key=str) == sorted(values, key=str)
