"""A database's change log in Debezium's envelope (`ingest --source-kind debezium`), from a real broker:
creates, updates and deletes applied in the database's own order, whatever order they arrive in, so a
replay of older changes never brings back an old value or a deleted row. Judged by hudi-rs and Spark's
Hudi reader against the source database's final state."""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from hudi_ops.job_specs import IngestSpec
from hudi_ops.spark.__main__ import main
from tests.tables import job_result, read_hudi_rs, read_spark

pytestmark = pytest.mark.spark
COLUMNS = ("id", "name", "balance")


class Database:
    """A table of accounts in a source database, its change log on a topic, and its state: a change at a
    later place in the log wins, whatever order the topic carries them in."""

    def __init__(self, connector: str, kafka, tmp_path):
        self.connector, self.kafka = connector, kafka
        self.topic = f"db-{connector}-{uuid.uuid4().hex[:8]}"
        self.table = tmp_path / "accounts"
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})  # alive until the topic is made
        admin.create_topics([NewTopic(self.topic, num_partitions=2, replication_factor=1)])[self.topic].result(30)
        self.state: dict[int, tuple[int, dict | None]] = {}  # id -> (place in the log, row or None: deleted)

    def source(self, place: int) -> dict:
        if self.connector == "postgresql":
            return {"connector": "postgresql", "db": "bank", "table": "accounts", "lsn": place, "txId": place}
        return {"connector": "mysql", "db": "bank", "table": "accounts", "file": f"mysql-bin.{place // 1000:06d}",
                "pos": place % 1000 * 100, "row": 0}

    def changes(self, changes, *, wrapped=False):
        """(op, place, row) each: `c`, `u` or `d` (row: the key's row before, for d); produced in the given
        order, a delete followed by Kafka's tombstone."""
        producer = Producer({"bootstrap.servers": self.kafka.bootstrap_servers})
        for op, place, row in changes:
            envelope = {"before": row if op == "d" else None, "after": None if op == "d" else row, "op": op,
                        "source": self.source(place), "ts_ms": 1_790_000_000_000 + place}
            value = {"schema": {"type": "struct"}, "payload": envelope} if wrapped else envelope
            key = json.dumps({"id": row["id"]}).encode()
            producer.produce(self.topic, key=key, value=json.dumps(value).encode())
            if op == "d":
                producer.produce(self.topic, key=key, value=None)
            old = self.state.get(row["id"])
            if old is None or place > old[0]:
                self.state[row["id"]] = (place, None if op == "d" else row)
        assert producer.flush(30) == 0

    def expected(self):
        return sorted(tuple(r[c] for c in COLUMNS) for _, r in self.state.values() if r is not None)

    def ingest(self, run: str) -> list[str]:
        return IngestSpec(base_path=str(self.table), table_name="accounts", table_type="MERGE_ON_READ",
                          record_key_field="id", source_kind="debezium", kafka_topic=self.topic, run_id=run,
                          hoodie_conf={"kafka.bootstrap.servers": self.kafka.bootstrap_servers}).to_argv()


def account(i: int, balance: float, name: str | None = None) -> dict:
    return {"id": i, "name": name or f"account-{i}", "balance": balance}


@pytest.mark.parametrize("connector", ["postgresql", "mysql"])
def test_a_change_log_with_replayed_older_changes_ends_as_the_databases_final_state(connector, kafka, tmp_path,
                                                                                    spark, capsys):
    db = Database(connector, kafka, tmp_path)
    # places in the log: a MySQL place of 1000 or more is a later binlog file
    db.changes([("c", 10, account(1, 10.0)), ("c", 20, account(2, 20.0)), ("c", 30, account(3, 30.0)),
                ("c", 40, account(4, 40.0)), ("u", 1500, account(2, 25.0)), ("d", 1600, account(3, 30.0)),
                ("u", 1700, account(4, 41.0)), ("u", 1800, account(4, 42.0))], wrapped=connector == "mysql")
    assert main(db.ingest("run-1"), spark=spark) == 0, job_result(capsys.readouterr().out)
    result = job_result(capsys.readouterr().out)
    assert result["outcome"] == "committed", result
    assert read_hudi_rs(db.table, COLUMNS) == db.expected()

    # the connector restarted from an older place in the log: it sends every change from there again, in
    # the log's order (here split over commits, so that a create comes back a commit before its delete),
    # then new ones; and an older update of a live key arrives late on its own
    log = [("c", 30, account(3, 30.0)), ("c", 40, account(4, 40.0)), ("u", 1500, account(2, 25.0)),
           ("d", 1600, account(3, 30.0)), ("u", 1700, account(4, 41.0)), ("u", 1800, account(4, 42.0))]
    db.changes([*log, ("c", 1900, account(5, 50.0)), ("d", 2000, account(1, 10.0)), ("u", 20, account(2, 20.0))])
    code = main([*db.ingest("run-2"), "--source-limit-events", "4"], spark=spark)
    result = job_result(capsys.readouterr().out)
    assert code == 0 and result["commits"] >= 3, result
    rows = read_hudi_rs(db.table, COLUMNS)
    assert rows == db.expected() == read_spark(spark, db.table, COLUMNS)
    assert [r[0] for r in rows] == [2, 4, 5] and rows[0][2] == 25.0  # 1 and 3 deleted; 2 keeps its newest
