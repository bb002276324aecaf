"""Can the table take the input? Checked on the input's schema before Hudi starts.

Hudi's writer evolves the table's schema to fit the input: given strings where the table has longs,
it turns the table's column into strings, for every reader, from that commit on. A job that means to
write rows does not mean to change the table's types, so the input must fit the table as it is:
the same types, or ones the table's type holds without change (Avro's promotions int -> long ->
float -> double). New columns are fine (Hudi adds them); a missing column is refused unless
`hoodie.write.set.null.for.missing.columns` is true, as Hudi itself does.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.types as pat

from hudi_ops.errors import InvalidInputError
from hudi_ops.options.keys import WriteConfig
from hudi_ops.spark.jobs.target import TargetTable

SET_NULL_FOR_MISSING_COLUMNS = WriteConfig.SET_NULL_FOR_MISSING_COLUMNS.name
_META_PREFIX = "_hoodie_"


def check_input_schema(
    columns: pa.Schema, target: TargetTable, options: Mapping[str, str], what: str, *, keys_only: bool = False
) -> None:
    """Raise InvalidInputError naming the first field the table cannot take from `what` (the input).
    `keys_only`: the input names records to delete, by key and partition."""
    names = set(columns.names)
    ordering = (target.ordering_field,) if target.ordering_field and not keys_only else ()
    for role, fields in (("record key", target.record_key_fields), ("partition path", target.partition_fields),
                         ("ordering", ordering)):
        for f in fields:
            if f not in names:
                raise InvalidInputError(
                    f"{what} has no {role} field {f!r} (its columns: {', '.join(columns.names)}); add the column "
                    f"to the source, or name the source's {role} column in the table's settings"
                )
    if target.schema is None or keys_only:
        return
    missing_ok = options.get(SET_NULL_FOR_MISSING_COLUMNS, "false").strip().lower() == "true"
    for column in target.schema:
        if column.name.startswith(_META_PREFIX):
            continue
        if column.name not in names:
            if missing_ok:
                continue
            raise InvalidInputError(
                f"{what} lacks the table's column {column.name!r} ({column.type}); add it to the source (nulls "
                f"are fine), or set {SET_NULL_FOR_MISSING_COLUMNS}=true to write nulls for missing columns"
            )
        given = columns.field(column.name).type
        if not holds(column.type, given):
            raise InvalidInputError(
                f"field {column.name!r} is {given} in {what} but {column.type} in the table, which cannot hold it "
                f"without changing the table's type for every reader; cast the source's {column.name!r} to "
                f"{column.type}, or change the table's schema on purpose (ALTER TABLE) first"
            )


def holds(table: pa.DataType, given: pa.DataType) -> bool:
    """Whether a column of type `table` takes values of type `given` unchanged."""
    if table.equals(given) or pat.is_null(given):
        return True
    if pat.is_integer(given):
        return (pat.is_integer(table) and table.bit_width >= given.bit_width) or pat.is_floating(table)
    if pat.is_floating(given):
        return pat.is_floating(table) and table.bit_width >= given.bit_width
    if pat.is_timestamp(table) and pat.is_timestamp(given):  # units differ in spelling; a zone is a kind
        return (table.tz is None) == (given.tz is None)
    for kind in (pat.is_string, pat.is_large_string), (pat.is_binary, pat.is_large_binary), \
            (pat.is_date32, pat.is_date64):
        if any(k(table) for k in kind) and any(k(given) for k in kind):
            return True  # spellings differ; the values are the same kind
    if pat.is_decimal(table) and pat.is_decimal(given):
        return table.scale == given.scale and table.precision >= given.precision
    if pat.is_struct(table) and pat.is_struct(given):
        inner = {given.field(i).name: given.field(i).type for i in range(given.num_fields)}
        return all(holds(table.field(i).type, inner[table.field(i).name])
                   for i in range(table.num_fields) if table.field(i).name in inner)
    if pat.is_list(table) or pat.is_large_list(table):
        return (pat.is_list(given) or pat.is_large_list(given)) and holds(table.value_type, given.value_type)
    if pat.is_map(table) and pat.is_map(given):
        return holds(table.key_type, given.key_type) and holds(table.item_type, given.item_type)
    return False
