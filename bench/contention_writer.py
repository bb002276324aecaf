"""One writer of bench/commit_contention.py and bench/wasted_work.py: K commits in one Spark session.

spark-submit --jars <hudi bundle> contention_writer.py TABLE SOURCE_DIR TABLE_TYPE PARTITION KEYS COMMITS [k=v ...]

Each commit upserts rows into PARTITION: KEYS `own:N` are N keys of this writer's alone, `shared:N` the
same N keys for every writer (the file groups they contend for). TABLE_TYPE is a new table's. A try
that Hudi refuses (exit 3, a write conflict; 4, the lock) is retried at once, as Airflow would after
its backoff. The k=v pairs are the writer's hoodie.* options. Prints one JSON line: each commit's
tries (exit code, seconds, hudi-ops error), its start and end, and its rows' ordering value.
"""

import contextlib
import io
import json
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.job_specs import IngestSpec
from hudi_ops.options.properties_file import parse_key_values
from hudi_ops.spark.__main__ import main
from hudi_ops.spark.session import spark_session

RETRIED = (3, 4)
MAX_TRIES = 20

table, source, table_type, partition = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
whose, count = sys.argv[5].split(":")
commits = int(sys.argv[6])
ingest = IngestSpec(base_path=table, table_name="bench", source_path=str(source), record_key_field="key",
                    partition_path_field="part", ordering_field="ts", table_type=table_type,
                    hoodie_conf=parse_key_values(sys.argv[7:]))
spark = spark_session("contention-writer")
writer = source.name
done = []
for n in range(commits):
    names = [f"{partition}-{i:05d}" if whose == "shared" else f"{writer}-{n}-{i:05d}" for i in range(int(count))]
    ts = time.time_ns()
    pq.write_table(pa.table({"key": names, "part": [partition] * len(names), "ts": [ts] * len(names),
                             "writer": [writer] * len(names)}), source / f"{n:04d}.parquet")
    tries, start = [], time.time()
    while len(tries) < MAX_TRIES:
        started, out = time.perf_counter(), io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(ingest.to_argv(), spark=spark)
        said = [json.loads(ln) for ln in out.getvalue().splitlines() if ln.startswith("{")]
        tries.append({"code": code, "s": round(time.perf_counter() - started, 3),
                      "error": said[-1].get("error") if said else None})
        if code not in RETRIED:
            break
    done.append({"tries": tries, "start": start, "at": time.time(), "ts": ts})
print(json.dumps({"writer": writer, "commits": done}), flush=True)
