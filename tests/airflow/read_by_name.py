"""A PySpark application an analyst would run: Spark SQL with Hive support reads tables by name from the
metastore it is given (`spark.hadoop.hive.metastore.uris`) and writes each table's rows as one JSON line
into the file its first argument names (its stdout shares a log with the JVM's stderr)."""

import json
import sys

from pyspark.sql import SparkSession

if __name__ == "__main__":
    spark = SparkSession.builder.enableHiveSupport().getOrCreate()
    output, columns = sys.argv[1], sys.argv[2].split(",")
    with open(output, "w") as out:
        for table in sys.argv[3:]:
            rows = sorted([list(r) for r in spark.table(table).select(*columns).collect()])
            out.write(json.dumps({"table": table, "rows": rows}) + "\n")
    spark.stop()
