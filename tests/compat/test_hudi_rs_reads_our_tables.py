"""hudi-rs (the `hudi` package) must read exactly what hudi-ops reads, and what a plain model predicts.

Each scenario writes a table with hudi-ops - several upserts (with in-batch duplicates and late
events), a delete, and more upserts - then compares, for the latest snapshot, time travel to every
instant, and incremental reads between completion times: hudi-ops == hudi-rs == model.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import hudi
import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from tests.compat.model import TableModel

pytestmark = pytest.mark.compat

USER_COLUMNS = ("id", "kind", "rider", "ts", "fare", "active", "day", "event_time", "city")
COMPARED = ("_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path", *USER_COLUMNS)


@dataclass(frozen=True)
class Scenario:
    name: str
    key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    hive_style: bool
    ordering: bool  # event-time ordering on `ts`; else commit-time ordering
    table_type: str = "COPY_ON_WRITE"
    options: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.name


SCENARIOS = [
    Scenario("partitioned-hive-simple-eventtime", ("id",), ("city",), True, True),
    Scenario("partitioned-plain-simple-committime", ("id",), ("city",), False, False),
    Scenario("nonpartitioned-simple-eventtime", ("id",), (), False, True),
    Scenario("nonpartitioned-complex-committime", ("id", "kind"), (), False, False),
    Scenario("two-level-hive-complex-eventtime", ("id", "kind"), ("city", "kind"), True, True),
    Scenario("partitioned-plain-complex-eventtime", ("id", "kind"), ("city",), False, True),
    # MERGE_ON_READ written as deltacommits of base files (log files come with the MOR write path)
    Scenario("mor-partitioned-hive-simple-eventtime", ("id",), ("city",), True, True, "MERGE_ON_READ"),
    # tiny files: many file groups per partition, inserts packed into small files, rewrites of several groups
    Scenario("small-files-bloom-index", ("id",), ("city",), False, True, options=(
        ("hoodie.parquet.max.file.size", "9000"), ("hoodie.parquet.small.file.limit", "6500"),
        ("hoodie.copyonwrite.record.size.estimate", "700"), ("hoodie.index.type", "BLOOM"),
        ("hoodie.index.bloom.num_entries", "100"), ("hoodie.bloom.index.filter.type", "SIMPLE"),
    )),
]

CITIES = ("sf", "nyc", "chennai")
KINDS = ("a", "b")


def _rows(rng: random.Random, ids: list[int], ts_base: int) -> list[dict[str, Any]]:
    out = []
    for i in ids:
        out.append({
            "id": i,
            "kind": KINDS[i % 2],
            "rider": f"rider-{rng.randint(0, 999)}",
            "ts": ts_base + rng.randint(-50, 50),  # some updates arrive late and must lose under event time
            "fare": round(rng.uniform(1, 100), 2),
            "active": rng.random() < 0.5,
            "day": date(2026, 1, 1) + timedelta(days=rng.randint(0, 30)),
            "event_time": datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 10**6)),
            "city": CITIES[i % 3],
        })
    return out


SCHEMA = pa.schema([
    ("id", pa.int64()), ("kind", pa.string()), ("rider", pa.string()), ("ts", pa.int64()),
    ("fare", pa.float64()), ("active", pa.bool_()), ("day", pa.date32()),
    ("event_time", pa.timestamp("us", tz="UTC")), ("city", pa.string()),
])


def _arrow(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _normalise(table: pa.Table) -> list[tuple]:
    rows = []
    for r in table.select(list(COMPARED)).to_pylist():
        if isinstance(r["event_time"], datetime) and r["event_time"].tzinfo is None:
            r["event_time"] = r["event_time"].replace(tzinfo=UTC)
        rows.append(tuple(r[c] for c in COMPARED))
    return sorted(rows, key=repr)


def _model_rows(state: dict, model: TableModel) -> list[tuple]:
    rows = []
    for (partition, key), r in state.items():
        full = {**r, "_hoodie_record_key": key, "_hoodie_partition_path": partition}
        rows.append(tuple(full[c] for c in COMPARED))
    return sorted(rows, key=repr)


def _hudi_rs(path: str, options: Any = None) -> pa.Table:
    batches = hudi.HudiTable(path).read(options) if options is not None else hudi.HudiTable(path).read()
    if not batches:
        return pa.table({c: pa.array([], pa.string()) for c in COMPARED})
    return pa.Table.from_batches(batches)


def _completion_times(table: HudiTable) -> dict[str, str]:
    return {i.requested_time: i.completion_time for i in table.timeline().completed_writes()}


@pytest.fixture(params=SCENARIOS, ids=str)
def written(request, tmp_path):
    """Write the scenario's batches with hudi-ops; returns (table, model, instants)."""
    sc: Scenario = request.param
    rng = random.Random(sc.name)
    table = HudiTable.create(
        tmp_path / "t", name="compat_" + sc.name.replace("-", "_"), record_key=list(sc.key_fields),
        partition_fields=list(sc.partition_fields), hive_style=sc.hive_style,
        ordering_field="ts" if sc.ordering else None, table_type=sc.table_type,
    )
    model = TableModel(sc.key_fields, sc.partition_fields, sc.hive_style, "ts" if sc.ordering else None)
    steps: list[tuple[str, list[dict[str, Any]]]] = [
        ("bulk_insert", _rows(rng, list(range(0, 30)), 1000)),
        ("insert", _rows(rng, list(range(30, 40)), 1000)),           # new keys: packed into small files
        ("upsert", _rows(rng, [*range(30, 60), 31, 31, 45], 1040)),   # updates, inserts, in-batch dups
        ("upsert", _rows(rng, rng.sample(range(0, 60), 25), 1010)),   # late events: many lose on event time
        ("delete", _rows(rng, [1, 2, 3, 35, 59, 999], 0)),           # 999 does not exist
        ("upsert", _rows(rng, [*range(55, 70), 2], 1100)),            # re-insert a deleted key
    ]
    for op, rows in steps:
        result = table.write(_arrow(rows), op, options=dict(sc.options))
        if op == "delete":
            model.delete(rows, result.instant_time, result.completion_time)
        else:
            model.upsert(rows, result.instant_time, result.completion_time)
    if sc.options:  # the tiny-file scenario must really split partitions and pack inserts into small files
        groups = [g.id.partition_path for g in table.file_system_view().file_groups()]
        assert len(groups) > len(set(groups))
        tl = table.timeline()
        stats = [s for i in tl.completed_writes() for s in tl.commit_metadata(i).write_stats()]
        assert any(s.prev_commit != "null" and s.num_inserts for s in stats)
    return table, model


def test_latest_snapshot_matches(written):
    table, model = written
    ours = _normalise(table.read())
    assert ours == _model_rows(model.rows, model)
    assert _normalise(_hudi_rs(table.base_path)) == ours


def test_time_travel_to_every_instant_matches(written):
    table, model = written
    for requested, completion, _ in model.history:
        for point in (requested, completion):
            expected = _model_rows(model.state_as_of(point), model)
            ours = _normalise(table.read(as_of=point))
            assert ours == expected, f"as of {point}"
            theirs = _normalise(_hudi_rs(table.base_path, hudi.HudiReadOptions().with_as_of_timestamp(point)))
            assert theirs == ours, f"hudi-rs as of {point}"


def test_incremental_reads_between_completion_times_match(written):
    table, model = written
    completions = ["19700101000000000"] + [c for _, c, _ in model.history]
    ranges = [*itertools.pairwise(completions), (completions[0], completions[-1]), (completions[1], completions[-2])]
    for begin, end in ranges:
        expected = _model_rows(model.incremental(begin, end), model)
        ours = _normalise(table.incremental(begin, end))
        assert ours == expected, f"incremental ({begin}, {end}]"
        opts = (hudi.HudiReadOptions().with_query_type(hudi.HudiQueryType.Incremental)
                .with_start_timestamp(begin).with_end_timestamp(end))
        assert _normalise(_hudi_rs(table.base_path, opts)) == ours, f"hudi-rs incremental ({begin}, {end}]"


def test_timeline_is_what_hudi_rs_sees(written):
    table, model = written
    rs = hudi.HudiTable(table.base_path)
    tl = rs.get_timeline()
    commits = [i.timestamp for i in (tl.get_completed_deltacommits() if rs.is_mor else tl.get_completed_commits())]
    assert commits == [req for req, _, _ in model.history]
    assert rs.table_name == table.properties.table_name
    assert _completion_times(table) == {req: comp for req, comp, _ in model.history}
