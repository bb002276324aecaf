"""Commits never lose or expose data: conflicting writers in one process, failures around the commit."""

from __future__ import annotations

import hudi
import pyarrow as pa
import pytest

from hudi_ops import HudiTable, WriteConflictError
from hudi_ops.client import write_client as write_client_module
from hudi_ops.concurrency import markers as markers_module


def _rows(*items: tuple[int, int, str, str]) -> pa.Table:
    return pa.Table.from_pylist(
        [dict(zip(("id", "ts", "city", "v"), r, strict=True)) for r in items],
        schema=pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("city", pa.string()), ("v", pa.string())]),
    )


def _state(table: HudiTable) -> list[tuple]:
    rows = table.read(columns=["id", "city", "v"]).to_pylist()
    ours = sorted((r["id"], r["city"], r["v"]) for r in rows)
    rs = pa.Table.from_batches(hudi.HudiTable(table.base_path).read()).select(["id", "city", "v"]).to_pylist()
    assert sorted((r["id"], r["city"], r["v"]) for r in rs) == ours, "hudi-rs disagrees"
    return ours


def _files_of(table: HudiTable, instant: str) -> list[str]:
    """Every file (data, marker, heartbeat, timeline) whose path names the instant."""
    return [f.path for f in table.meta.storage.walk_files("") if instant in f.path]


@pytest.fixture
def table(tmp_path):
    t = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["city"], ordering_field="ts")
    t.upsert(_rows((1, 1, "sf", "a"), (2, 1, "sf", "b"), (3, 1, "nyc", "c")))
    return t


def test_second_writer_to_the_same_file_group_conflicts_and_leaves_nothing(table):
    a, b = table.write_client(), table.write_client()
    ta, tb = a.start_commit(), b.start_commit()
    sa = a.upsert(_rows((1, 2, "sf", "from-a")), ta)
    sb = b.upsert(_rows((2, 2, "sf", "from-b")), tb)  # another key, same file group
    a.commit(ta, sa)
    with pytest.raises(WriteConflictError) as err:
        b.commit(tb, sb)
    assert (err.value.instant, err.value.conflicting_instant) == (tb, ta)
    assert any(f.startswith("sf/") for f in err.value.file_ids)
    assert _state(table) == [(1, "sf", "from-a"), (2, "sf", "b"), (3, "nyc", "c")]
    assert _files_of(table, tb) == []  # data files, markers, heartbeat and timeline files of b are gone


def test_inserts_packed_into_the_same_small_file_conflict(table):
    a, b = table.write_client(), table.write_client()
    ta, tb = a.start_commit(), b.start_commit()
    sa = a.insert(_rows((10, 1, "sf", "a10")), ta)
    sb = b.insert(_rows((20, 1, "sf", "b20")), tb)
    a.commit(ta, sa)
    with pytest.raises(WriteConflictError):
        b.commit(tb, sb)
    assert [r for r in _state(table) if r[1] == "sf"] == [(1, "sf", "a"), (2, "sf", "b"), (10, "sf", "a10")]


def test_writers_of_disjoint_file_groups_both_commit(table):
    a, b = table.write_client(), table.write_client()
    ta, tb = a.start_commit(), b.start_commit()
    sa = a.upsert(_rows((1, 2, "sf", "A")), ta)
    sb = b.upsert(_rows((3, 2, "nyc", "C"), (4, 1, "la", "D")), tb)
    b.commit(tb, sb)
    a.commit(ta, sa)
    assert _state(table) == [(1, "sf", "A"), (2, "sf", "b"), (3, "nyc", "C"), (4, "la", "D")]


def test_a_commit_that_completed_after_we_started_conflicts_even_if_our_plan_saw_it(table):
    """Slices are ordered by requested time: our rewrite, requested first, would sort below the other
    commit's file and vanish, so Hudi counts every commit completed after our start as a candidate."""
    client = table.write_client()
    t = client.start_commit()
    first = table.upsert(_rows((1, 2, "sf", "first")))  # requested after t, completes before t plans
    statuses = client.upsert(_rows((1, 3, "sf", "second")), t)
    with pytest.raises(WriteConflictError) as err:
        client.commit(t, statuses)
    assert err.value.conflicting_instant == first.instant_time
    assert (1, "sf", "first") in _state(table)


def test_failure_before_the_completed_file_undoes_the_write(table, monkeypatch):
    before = _state(table)

    def broken(*args, **kwargs):
        raise OSError("storage went away")

    monkeypatch.setattr(write_client_module, "transition_to_completed", broken)
    with pytest.raises(OSError, match="storage went away"):
        table.upsert(_rows((1, 9, "sf", "lost"), (7, 1, "sf", "new")))
    assert _state(table) == before
    assert [i.requested_time for i in table.timeline()][-1] == table.timeline().completed[-1].requested_time


def test_failure_after_the_completed_file_keeps_the_commit(table, monkeypatch, caplog):
    original = markers_module.WriteMarkers.delete_all
    calls = {"n": 0}

    def flaky(self):
        calls["n"] += 1
        raise OSError("cannot delete markers")

    monkeypatch.setattr(markers_module.WriteMarkers, "delete_all", flaky)
    result = table.upsert(_rows((1, 9, "sf", "kept")))
    monkeypatch.setattr(markers_module.WriteMarkers, "delete_all", original)
    assert calls["n"] >= 1 and "committed" in caplog.text
    assert (1, "sf", "kept") in _state(table)
    assert table.timeline().completed_instant(result.instant_time) is not None


def test_a_conflict_is_retried_when_asked(table, monkeypatch):
    original = write_client_module.WriteClient.write
    competitors: list[str] = []

    def write_then_lose_the_race(self, batch, instant, operation):
        statuses = original(self, batch, instant, operation)
        if not competitors:  # another writer commits to the same file group while we write
            competitors.append("racing")
            competitors[0] = HudiTable.open(table.base_path).upsert(_rows((2, 5, "sf", "other"))).instant_time
        return statuses

    monkeypatch.setattr(write_client_module.WriteClient, "write", write_then_lose_the_race)
    with pytest.raises(WriteConflictError):
        table.upsert(_rows((1, 5, "sf", "mine")))
    competitors.clear()
    result = table.upsert(_rows((1, 5, "sf", "mine")), options={"hoodie.write.num.retries.on.conflict.failures": "1"})
    assert result.instant_time > competitors[0]
    assert _state(table) == [(1, "sf", "mine"), (2, "sf", "other"), (3, "nyc", "c")]
