"""One writer of bench/commit_contention.py: K commits into its own partition, in one Spark session.

spark-submit --jars <hudi bundle> contention_writer.py TABLE SOURCE_DIR PARTITION COMMITS [k=v ...]

The k=v pairs are the writer's hoodie.* options.
"""

import contextlib
import io
import json
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.config import parse_key_values
from hudi_ops.job_specs import IngestSpec
from hudi_ops.spark.__main__ import main
from hudi_ops.spark.session import spark_session

table, source, partition, commits = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ingest = IngestSpec(base_path=table, table_name="bench", source_path=str(source), record_key_field="key",
                    partition_path_field="part", ordering_field="ts", hoodie_conf=parse_key_values(sys.argv[5:]))
spark = spark_session("contention-writer")
done = []
for n in range(commits):
    keys = [f"{partition}-{n}-{i:05d}" for i in range(2_000)]
    pq.write_table(pa.table({"key": keys, "part": [partition] * len(keys), "ts": [n] * len(keys)}),
                   source / f"{n:04d}.parquet")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(ingest.to_argv(), spark=spark)
    done.append({"code": code, "at": time.time()})
print(json.dumps({"writer": partition, "commits": done}), flush=True)
