"""A PySpark application an analyst would run: Spark SQL with Hive support reads tables by name from the
metastore it is given (`spark.hadoop.hive.metastore.uris`) and prints each table's rows as one JSON line."""

import json
import sys

from pyspark.sql import SparkSession

if __name__ == "__main__":
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    columns = sys.argv[1].split(",")
    for table in sys.argv[2:]:
        rows = sorted([list(r) for r in spark.table(table).select(*columns).collect()])
        print(json.dumps({"table": table, "rows": rows}), flush=True)
    spark.stop()
