"""An upstream Hudi table's changes (hudi_ops.sources.hudi_table) as the rows the derived table upserts:
Hudi's CDC query of the run's new writes, each key's last change (its row after, or its row before with
Hudi's delete marker for a delete), or the upstream's snapshot; then the optional SQL transform."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.format.meta_fields import META_COLUMNS
from hudi_ops.options.keys import DataSourceReadConfig
from hudi_ops.sources.debezium import DELETED
from hudi_ops.sources.hudi_table import TRANSFORMER_SQL, UpstreamWork

_SOURCE_VIEW = "hudi_ops_upstream_changes"


def read_upstream(spark: Any, work: UpstreamWork, record_keys: tuple[str, ...], options: Mapping[str, str]) -> Any:
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    snapshot = spark.read.format("hudi").load(work.upstream)
    row = StructType([f for f in snapshot.schema.fields if f.name not in META_COLUMNS])
    if work.full_scan:
        rows = snapshot.select(*row.names, F.lit(False).alias(DELETED))
    else:
        after, up_to = work.requested_range
        changes = (spark.read.format("hudi").option(DataSourceReadConfig.QUERY_TYPE.name, "incremental")
                   .option(DataSourceReadConfig.INCREMENTAL_FORMAT.name, "cdc")
                   .option(DataSourceReadConfig.BEGIN_INSTANTTIME.name, after)
                   .option(DataSourceReadConfig.END_INSTANTTIME.name, up_to).load(work.upstream)
                   .where(F.col("ts_ms").isin(*(w.requested_time for w in work.writes))))
        deleted = F.col("op") == "d"
        image = F.from_json(F.when(deleted, F.col("before")).otherwise(F.col("after")), row)
        missing = [k for k in record_keys if k not in row.names]
        if missing:
            raise InvalidInputError(f"the upstream table {work.upstream} has no column {', '.join(missing)}, the "
                                    "derived table's record key: give the derived table a key of the upstream's "
                                    "columns (or make it in the transform)")
        latest = Window.partitionBy(*(F.col(f"row.{k}") for k in record_keys)).orderBy(F.col("ts_ms").desc())
        rows = (changes.select(image.alias("row"), deleted.alias(DELETED), "ts_ms")
                .withColumn("nth", F.row_number().over(latest)).where("nth = 1")
                .select("row.*", DELETED))
    query = options.get(TRANSFORMER_SQL)
    if not query:
        return rows
    if "<SRC>" not in query:
        raise InvalidInputError(f"{TRANSFORMER_SQL} must read the changes as <SRC> (SELECT ... FROM <SRC> ...), as "
                                "HoodieStreamer's SqlQueryBasedTransformer does")
    rows.createOrReplaceTempView(_SOURCE_VIEW)
    transformed = spark.sql(query.replace("<SRC>", _SOURCE_VIEW))
    if DELETED not in transformed.columns:
        raise InvalidInputError(f"{TRANSFORMER_SQL} drops {DELETED}, which marks the upstream's deletes: keep it "
                                "(SELECT ..., _hoodie_is_deleted FROM <SRC>)")
    return transformed
