"""A database's change log in Debezium's JSON envelope on a Kafka topic (`--source-kind debezium`).

Its offsets and checkpoints are a Kafka topic's (hudi_ops.sources.kafka). Each message is one change:
`op` `c` (create), `r` (a snapshot's read) and `u` (update) upsert the row `after`; `d` deletes the key of
`before`; a tombstone (a null value, Kafka's compaction marker after a delete) carries nothing. The
envelope may be wrapped as `{"schema": ..., "payload": {...}}` (Kafka Connect's JSON converter with
schemas). Changes are ordered by their place in the source database's log, not by when they arrive:
Postgres's `source.lsn` as `_event_lsn`, MySQL's binlog `source.file`, `source.pos` and `source.row` as
one number `_event_seq` (Hudi's Debezium payloads' names); the table's ordering field, so that Hudi's
event-time ordering keeps a key's latest change whatever order its changes are written in.
"""

from __future__ import annotations

#: the ordering column of each connector's changes (Hudi's PostgresDebeziumAvroPayload, MySqlDebeziumAvroPayload)
POSTGRES_ORDERING = "_event_lsn"
MYSQL_ORDERING = "_event_seq"
#: Hudi's delete marker: a row with it true deletes its key in an upsert
DELETED = "_hoodie_is_deleted"
UPSERTS, DELETES = ("c", "r", "u"), ("d",)
#: MySQL's place in its binlog as one number: the file's index, then the position in it (below 2^32),
#: then the row of a multi-row event; an event of n rows is over n bytes long, so the next event's
#: position, shifted, is past every row of this one
POS_BITS, ROW_BITS = 32, 8
