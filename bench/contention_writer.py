"""One writer of bench/commit_contention.py and bench/wasted_work.py: K commits in one Spark session.

spark-submit --jars <hudi bundle> contention_writer.py TABLE SOURCE_DIR PARTITION KEYS COMMITS [k=v ...]

Each commit upserts KEYS rows into PARTITION; `own` keys are this writer's alone, `shared` keys are the
same for every writer (the file groups they contend for). A try that Hudi refuses (exit 3, a write
conflict; 4, the lock) is retried at once, as Airflow would after its backoff. The k=v pairs are the
writer's hoodie.* options, and `table_type=MERGE_ON_READ` the type of a table it creates. Prints one
JSON line: each commit's tries (exit code, seconds, hudi-ops error), its start and end, and its rows'
ordering value.
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

RETRIED = (3, 4)
MAX_TRIES = 20

table, source, partition, keys, commits = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
options = parse_key_values(sys.argv[6:])
ingest = IngestSpec(base_path=table, table_name="bench", source_path=str(source), record_key_field="key",
                    partition_path_field="part", ordering_field="ts",
                    table_type=options.pop("table_type", None), hoodie_conf=options)
spark = spark_session("contention-writer")
writer = source.name
done = []
for n in range(commits):
    names = [f"{partition}-{i:05d}" if keys == "shared" else f"{writer}-{n}-{i:05d}" for i in range(2_000)]
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
