"""The baseline of bench/platform_overhead.py: one Hudi upsert as a bare PySpark script, no hudi-ops.

spark-submit --jars <hudi bundle> bare_hudi_upsert.py TABLE_PATH SOURCE_FILE
"""

import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("bare-hudi-upsert").getOrCreate()
spark.read.parquet(sys.argv[2]).write.format("hudi").options(**{
    "hoodie.table.name": "bench",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.operation": "upsert",
}).mode("append").save(sys.argv[1])
spark.stop()
