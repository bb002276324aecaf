"""Hudi's meta fields: the columns Hudi adds to every record of a table that populates them
(`hoodie.populate.meta.fields`, true by default), as HoodieRecord names them; `_hoodie_operation` only
where the table keeps each record's operation."""

from __future__ import annotations

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
OPERATION = "_hoodie_operation"
#: what a write makes anew for each record, so a row read from a table drops them before it is written
META_COLUMNS = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME, OPERATION)
