"""Writers leave alone the file groups that a pending clustering or compaction plans to rewrite."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_ops import HudiTable, WriteConflictError
from tests.builders import schedule_clustering


@pytest.fixture
def table(tmp_path):
    t = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["city"], ordering_field="ts")
    t.upsert(pa.table({"id": [1, 2, 3], "ts": [1, 1, 1], "city": ["sf", "sf", "nyc"]}))
    return t


def _schedule_clustering(table: HudiTable, partition: str) -> tuple[str, str]:
    """Plan a clustering of the partition's file group; returns (T, file id)."""
    target = next(b for b in table.file_system_view().latest_base_files() if b.partition_path == partition)
    return schedule_clustering(table, target), target.file_id


def test_view_reports_file_groups_of_a_pending_clustering(table):
    instant, file_id = _schedule_clustering(table, "sf")
    pending = table.file_system_view().pending_clustering
    assert {(g.partition_path, g.file_id): t for g, t in pending.items()} == {("sf", file_id): instant}


def test_update_into_pending_clustering_file_group_is_a_retryable_conflict(table):
    first = table.timeline().completed[0].requested_time
    instant, file_id = _schedule_clustering(table, "sf")
    before = table.read().sort_by("id")
    with pytest.raises(WriteConflictError, match=f"pending clustering {instant}") as err:
        table.upsert(pa.table({"id": [1], "ts": [2], "city": ["sf"]}))
    assert err.value.conflicting_instant == instant
    assert any(file_id in f for f in err.value.file_ids)
    assert table.read().sort_by("id").equals(before)
    # the refused write left no instant behind: only the first commit and the clustering plan
    assert {i.requested_time for i in table.timeline()} == {first, instant}
    # other partitions are free to take updates
    table.upsert(pa.table({"id": [3], "ts": [2], "city": ["nyc"]}))


def test_inserts_do_not_pack_into_a_file_group_under_clustering(table):
    _, file_id = _schedule_clustering(table, "sf")
    table.upsert(pa.table({"id": [10, 11], "ts": [1, 1], "city": ["sf", "sf"]}))
    sf_groups = {b.file_id for b in table.file_system_view().latest_base_files() if b.partition_path == "sf"}
    assert file_id in sf_groups and len(sf_groups) == 2
    assert sorted(table.read(columns=["id"]).column("id").to_pylist()) == [1, 2, 3, 10, 11]
