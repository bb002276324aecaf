"""One writer of bench/commit_contention.py: K commits into its own partition, in one Spark session.

spark-submit --jars <hudi bundle> contention_writer.py TABLE SOURCE_DIR PARTITION COMMITS [--hoodie-conf k=v ...]
"""

import contextlib
import io
import json
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.spark.__main__ import main
from hudi_ops.spark.session import spark_session

table, source, partition, commits, conf = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5:]
spark = spark_session("contention-writer")
done = []
for n in range(commits):
    keys = [f"{partition}-{n}-{i:05d}" for i in range(2_000)]
    pq.write_table(pa.table({"key": keys, "part": [partition] * len(keys), "ts": [n] * len(keys)}),
                   source / f"{n:04d}.parquet")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["ingest", "--target-base-path", table, "--target-table", "bench", "--source-path", str(source),
                     "--record-key-field", "key", "--partition-path-field", "part", "--source-ordering-field", "ts",
                     *conf], spark=spark)
    done.append({"code": code, "at": time.time()})
print(json.dumps({"writer": partition, "commits": done}), flush=True)
