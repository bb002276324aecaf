"""The CLI's retryable failures have their own exit codes: 3 for a write conflict, 4 for a lock timeout."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops import HudiTable
from hudi_ops.cli import main
from tests.builders import schedule_clustering

FS_LOCK = "hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"


def _setup(tmp_path):
    table = HudiTable.create(tmp_path / "t", name="t", record_key="id")
    table.upsert(pa.table({"id": [1], "v": ["a"]}))
    pq.write_table(pa.table({"id": [1], "v": ["b"]}), tmp_path / "in.parquet")
    return table


def test_lock_timeout_exits_4_naming_the_lock(tmp_path, capsys):
    table = _setup(tmp_path)
    (tmp_path / "t" / ".hoodie" / "lock").write_text("held by another writer")
    code = main(["write", table.base_path, "--input", str(tmp_path / "in.parquet"),
                 "--hoodie-conf", FS_LOCK, "--hoodie-conf", "hoodie.write.lock.wait_time_ms=300"])
    err = capsys.readouterr().err
    assert code == 4
    assert f"{tmp_path}/t/.hoodie/lock" in err and "held by another writer" in err
    assert table.read(columns=["v"]).column("v").to_pylist() == ["a"]


def test_write_conflict_exits_3(tmp_path, capsys):
    table = _setup(tmp_path)
    [target] = table.file_system_view().latest_base_files()
    schedule_clustering(table, target)
    assert main(["write", table.base_path, "--input", str(tmp_path / "in.parquet")]) == 3
    assert "write conflict" in capsys.readouterr().err
    assert table.read(columns=["v"]).column("v").to_pylist() == ["a"]
