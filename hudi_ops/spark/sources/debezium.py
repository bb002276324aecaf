"""A Debezium change log's batch (hudi_ops.sources.debezium) as the rows Hudi upserts: each change's row
image, Hudi's delete marker for deletes, and its place in the database's log as the ordering column."""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.sources.debezium import (
    DELETED,
    DELETES,
    MYSQL_ORDERING,
    POS_BITS,
    POSTGRES_ORDERING,
    ROW_BITS,
    UPSERTS,
)
from hudi_ops.sources.error_table import NOT_A_RECORD
from hudi_ops.sources.kafka import KafkaBatch
from hudi_ops.spark.sources.kafka import BadMessages, messages, parsed_values, with_known_types


def read_changes(spark: Any, batch: KafkaBatch, client: Mapping[str, str], known: Any | None,
                 partition_fields: tuple[str, ...], bad: BadMessages) -> tuple[Any, str] | None:
    """(the rows, the ordering column); None when the batch holds no change (tombstones only) or none
    that can be applied (those go to `bad`). `known`: the table's columns (a Spark schema), whose types
    the row images take."""
    from pyspark.sql import functions as F

    topic = batch.end.topic
    parsed = parsed_values(spark, messages(spark, batch, client), bad, lambda inferred: _envelope(inferred, known))
    if parsed is None:
        return None
    change = "v.payload" if "payload" in parsed.schema["v"].dataType.names else "v"
    op = F.col(f"{change}.op")
    parsed = bad.set_aside(parsed, ~op.isin(*UPSERTS, *DELETES) | op.isNull(),
                           "is a Debezium change hudi-ops cannot apply (op c, r, u and d only)", NOT_A_RECORD)
    envelope = parsed.schema["v"].dataType
    envelope = envelope["payload"].dataType if change == "v.payload" else envelope
    names = envelope["source"].dataType.names
    if "lsn" in names:
        column, order = POSTGRES_ORDERING, F.col(f"{change}.source.lsn").cast("long")
    elif "file" in names and "pos" in names:
        column = MYSQL_ORDERING
        index = F.regexp_extract(F.col(f"{change}.source.file"), r"\.(\d+)$", 1).cast("long")
        row = F.coalesce(F.col(f"{change}.source.row").cast("long"), F.lit(0)) if "row" in names else F.lit(0)
        order = (F.shiftleft(index, POS_BITS + ROW_BITS) + F.shiftleft(F.col(f"{change}.source.pos").cast("long"),
                                                                         ROW_BITS) + row)
    else:
        raise InvalidInputError(f"the changes in topic {topic} name no place in the database's log (Postgres's "
                                "source.lsn, MySQL's source.file and source.pos): hudi-ops reads Postgres and MySQL "
                                "change logs")
    image = F.when(op.isin(*DELETES), F.col(f"{change}.before")).otherwise(F.col(f"{change}.after"))
    parsed = bad.set_aside(parsed, image.isNull() | order.isNull(),
                           "is a Debezium change without its row (a delete needs `before`: the table's REPLICA "
                           "IDENTITY must give the key) or without its place in the log", NOT_A_RECORD)
    if partition_fields:  # a delete goes to its key's partition, which `before` must name
        columns = envelope["before"].dataType.names
        unplaced = functools.reduce(operator.or_, (F.col(f"{change}.before.{p}").isNull() if p in columns
                                                   else F.lit(True) for p in partition_fields))
        parsed = bad.set_aside(parsed, op.isin(*DELETES) & unplaced,
                               f"is a delete whose row before names no {', '.join(partition_fields)} (the table's "
                               "partition): give the source table REPLICA IDENTITY FULL (Postgres) or full row "
                               "images (MySQL's binlog_row_image=FULL), or a global index to this table",
                               NOT_A_RECORD)
    rows = parsed.select(image.alias("row"), op.isin(*DELETES).alias(DELETED), order.alias(column))
    return rows.select("row.*", DELETED, column), column


def _envelope(inferred: Any, known: Any | None) -> Any:
    """The schema to parse the changes with: `before` and `after` of one row type (a batch of creates
    infers `before` as a null's text, a batch of deletes `after`), typed as the table's columns where it
    has them."""
    from pyspark.sql.types import StructField, StructType

    wrapped = "payload" in inferred.names and "op" not in inferred.names
    change = inferred["payload"].dataType if wrapped else inferred
    if not isinstance(change, StructType) or "op" not in change.names or "source" not in change.names:
        raise InvalidInputError(f"the messages are not Debezium changes: they have {', '.join(inferred.names)}, "
                                "and a change has op, before, after and source (or them under payload)")
    images = [change[n].dataType for n in ("after", "before") if n in change.names
              and isinstance(change[n].dataType, StructType)]
    if not images:
        raise InvalidInputError("the Debezium changes carry no row (neither before nor after is an object)")
    row = images[0] if len(images) == 1 else StructType(
        [*images[0].fields, *(f for f in images[1].fields if f.name not in images[0].names)])
    if known is not None:  # the table's own columns of a change log's rows
        own = StructType([f for f in known.fields if f.name not in (DELETED, POSTGRES_ORDERING, MYSQL_ORDERING)])
        row = with_known_types(row, own)
    fields = [StructField(f.name, row if f.name in ("before", "after") else f.dataType) for f in change.fields]
    for name in ("before", "after"):
        if name not in change.names:
            fields.append(StructField(name, row))
    shaped = StructType(fields)
    if wrapped:
        return StructType([StructField(f.name, shaped if f.name == "payload" else f.dataType)
                           for f in inferred.fields])
    return shaped
