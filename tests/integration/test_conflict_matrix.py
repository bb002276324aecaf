"""RFC-22's conflict matrix, one test per cell, with each writer in its own OS process.

Both writers write their files first; then A commits, then B. Whether B may commit depends only on
whether A rewrote a file group that B rewrote (or a pending clustering plans to).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import hudi
import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from tests.builders import schedule_clustering, schedule_compaction
from tests.integration.lock_options import FS_LOCK, zookeeper_lock

ROOT = Path(__file__).resolve().parents[2]


class Staged:
    """A writer process paused between writing and committing."""

    def __init__(self, tmp: Path, name: str, table: HudiTable, options: dict, op: str, rows: list[dict]):
        self.out = tmp / f"{name}.json"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.staged_writer", table.base_path, json.dumps(options), op,
             json.dumps(rows), str(self.out)], cwd=ROOT,
        )
        deadline = time.monotonic() + 60
        while not Path(f"{self.out}.written").exists():
            assert self.proc.poll() is None and time.monotonic() < deadline, f"{name} died before committing"
            time.sleep(0.01)

    def commit(self) -> dict:
        Path(f"{self.out}.go").touch()
        assert self.proc.wait(timeout=60) == 0
        return json.loads(self.out.read_text())


def _rows(*items) -> list[dict]:
    return [{"id": i, "v": v, "p": p} for i, v, p in items]


def _state(table: HudiTable) -> list[tuple]:
    ours = sorted((r["id"], r["v"], r["p"]) for r in table.read(columns=["id", "v", "p"]).to_pylist())
    rs = pa.Table.from_batches(hudi.HudiTable(table.base_path).read()).select(["id", "v", "p"]).to_pylist()
    assert sorted((r["id"], r["v"], r["p"]) for r in rs) == ours
    return ours


@pytest.fixture(params=["filesystem", "zookeeper"])
def lock_options(request):
    if request.param == "zookeeper":
        return zookeeper_lock(request.getfixturevalue("zookeeper").url)
    return FS_LOCK


@pytest.fixture
def table(tmp_path, lock_options):
    t = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["p"])
    t.upsert(pa.Table.from_pylist(_rows((1, "a", "x"), (2, "b", "x"), (3, "c", "y"))), options=lock_options)
    return t


def test_upserts_to_disjoint_partitions_both_commit(tmp_path, table, lock_options):
    a = Staged(tmp_path, "a", table, lock_options, "upsert", _rows((1, "A", "x")))
    b = Staged(tmp_path, "b", table, lock_options, "upsert", _rows((3, "B", "y")))
    assert "completed" in a.commit() and "completed" in b.commit()
    assert _state(table) == [(1, "A", "x"), (2, "b", "x"), (3, "B", "y")]


def test_upserts_to_the_same_file_group_one_commits_the_other_conflicts(tmp_path, table, lock_options):
    before = _state(table)
    a = Staged(tmp_path, "a", table, lock_options, "upsert", _rows((1, "A", "x")))
    b = Staged(tmp_path, "b", table, lock_options, "upsert", _rows((2, "B", "x")))
    ra, rb = a.commit(), b.commit()
    assert "completed" in ra
    assert rb["error"] == "WriteConflictError" and ra["instant"] in rb["message"]
    assert _state(table) == [(1, "A", "x"), *before[1:]]
    assert not [f for f in table.meta.storage.walk_files("") if rb["instant"] in f.path]  # nothing of B is left


def test_two_insert_only_writers_into_one_new_partition_both_commit(tmp_path, table, lock_options):
    a = Staged(tmp_path, "a", table, lock_options, "insert", _rows((10, "A", "z"), (11, "A", "z")))
    b = Staged(tmp_path, "b", table, lock_options, "insert", _rows((20, "B", "z")))
    assert "completed" in a.commit() and "completed" in b.commit()
    z = [r for r in _state(table) if r[2] == "z"]
    assert z == [(10, "A", "z"), (11, "A", "z"), (20, "B", "z")]
    assert len({b.file_id for b in table.file_system_view().latest_base_files() if b.partition_path == "z"}) == 2


def test_a_writer_against_a_clustering_planned_meanwhile_fails(tmp_path, table, lock_options):
    a = Staged(tmp_path, "a", table, lock_options, "upsert", _rows((1, "A", "x")))
    target = next(b for b in table.file_system_view().latest_base_files() if b.partition_path == "x")
    clustering = schedule_clustering(table, target)
    ra = a.commit()
    assert ra["error"] == "WriteConflictError" and f"pending clustering {clustering}" in ra["message"]
    assert (1, "a", "x") in _state(table)


def test_a_writer_after_a_scheduled_compaction_does_not_conflict(tmp_path, lock_options):
    """MERGE_ON_READ: a compaction planned before a writer does not make it fail. (Writers that would
    append logs to the compacting file group come with MOR log writes; today such an update is refused
    up front, so the cell is exercised with inserts and updates to other file groups.)"""
    table = HudiTable.create(tmp_path / "mor", name="mor", record_key="id", partition_fields=["p"],
                             table_type="MERGE_ON_READ")
    table.upsert(pa.Table.from_pylist(_rows((1, "a", "x"), (3, "c", "y"))), options=lock_options)
    target = next(b for b in table.file_system_view().latest_base_files() if b.partition_path == "x")
    schedule_compaction(table, target)
    a = Staged(tmp_path, "a", table, lock_options, "upsert", _rows((3, "C", "y"), (5, "e", "x")))
    assert "completed" in a.commit()
    assert _state(table) == [(1, "a", "x"), (3, "C", "y"), (5, "e", "x")]
    x_groups = {b.file_id for b in table.file_system_view().latest_base_files() if b.partition_path == "x"}
    assert target.file_id in x_groups and len(x_groups) == 2  # the insert went around the compacting group
