"""Storage calls per control-plane question on S3: LISTs, GETs and HEADs, counted at a local S3 server.

A COPY_ON_WRITE table gets COMMITS small ingest commits (Hudi's own writer, in one local session, with its
defaults: the metadata table on), with Hudi's archival keeping 240 to 250 of them active, so about half
are archived when it is done; a copy is kept after COMMITS / 2 commits, before any archival. Both are
uploaded to a local S3 server (moto's), and each question the control plane answers again and again
is asked once of each:

- `ingest tick`: the ingest DAG's "is there a new source file?" (the table's ingest checkpoint);
- `services tick`: the services DAG's four tasks' checks (clustering to schedule and to execute, clean,
  archive), each as its operator asks it;
- `group tick`: a services group's measure of the table, answering the same four in one look;
- `timeline page`: the timeline view of the table;
- `next clean`: what the next clean would remove.

Each is asked in a new process, as each Airflow task is (cold), and asked again in that process (warm:
what a refresh of the timeline page costs the api-server, which keeps completed commits' metadata).
The server counts the requests: a LIST is a ListObjects(V2) call (a page of up to 1,000 keys), a GET
reads an object (or a range of it), a HEAD asks for one's size (pyarrow's S3 asks before each read).
One JSON line: the counts per table, then the cold counts' growth from the half-size table to the
full one (1.0: the count does not grow with archived history).

`python bench/storage_calls.py [COMMITS]` (default 500); the tables are built once into .cache/bench/.
Figures of older code on the same tables: `PYTHONPATH=<an older checkout> python <this file>`, run from
a folder outside both checkouts (Python puts the current folder before PYTHONPATH); the questions are
then asked by the hudi_ops that PYTHONPATH names.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.job_specs import IngestSpec
from hudi_ops.s3_settings import S3Settings
from local_platform.s3_server import S3Server

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "bench"
BUCKET = "lake"
ARCHIVAL = {"hoodie.keep.min.commits": "240", "hoodie.keep.max.commits": "250",
            "hoodie.cleaner.commits.retained": "230"}
DAYS = ("2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23")


# -- the tables --------------------------------------------------------------------------------------


def build(commits: int) -> tuple[Path, Path]:
    """The table after `commits` ingests (half archived) and its copy after `commits // 2` (none)."""
    root = CACHE / f"storage-calls-{commits}-metadata-table"
    full, half = root / "full" / "trips", root / "half" / "trips"
    if (root / "done").exists():
        return half, full
    shutil.rmtree(root, ignore_errors=True)
    from hudi_ops.spark.__main__ import main as job
    from hudi_ops.spark.session import session_builder

    spark = session_builder("storage-calls-bench", master="local[2]").config(
        "spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    landing = root / "landing"
    landing.mkdir(parents=True)
    for n in range(commits):
        rows = [{"trip_id": f"t{(n * 7 + i) % 400}", "dt": DAYS[(n + i) % len(DAYS)], "ts": n, "fare": float(i)}
                for i in range(5)]
        pq.write_table(pa.Table.from_pylist(rows), landing / f"{n:05d}.parquet")
        spec = IngestSpec(base_path=str(full), source_path=str(landing), table_name="trips", record_key_field="trip_id",
                          partition_path_field="dt", ordering_field="ts", hoodie_conf=ARCHIVAL)
        if job(spec.to_argv(), spark=spark) != 0:
            raise SystemExit(f"ingest {n} failed")
        if n + 1 == commits // 2:
            shutil.copytree(full, half)
        if n % 50 == 0:
            print(f"{n} commits", file=sys.stderr, flush=True)
    spark.stop()
    (root / "done").touch()
    return half, full


def upload(server: S3Server, table: Path, prefix: str) -> str:
    import boto3

    s3 = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1",
                      aws_access_key_id=server.access_key, aws_secret_access_key=server.secret_key)
    for path in table.rglob("*"):
        if path.is_file() and not path.name.endswith(".crc"):
            s3.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(table)}")
    return f"s3a://{BUCKET}/{prefix}"


# -- counting ----------------------------------------------------------------------------------------


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Requests(logging.Handler):
    """The server's request log (werkzeug's), as S3 calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        line = _ANSI.sub("", record.getMessage())  # werkzeug colours some status codes
        if '"' not in line:
            return
        method, target = line.split('"')[1].split(" ")[:2]
        path = target.partition("?")[0]
        if method == "GET" and path.strip("/") == BUCKET:
            self.calls["LIST"] += 1
        elif method in ("GET", "HEAD"):
            self.calls[method] += 1
        else:
            self.calls["other"] += 1


@contextmanager
def counted() -> Iterator[_Requests]:
    handler = _Requests()
    logger = logging.getLogger("werkzeug")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


# -- the questions -----------------------------------------------------------------------------------


def questions(table: str, s3: S3Settings, source: Path) -> dict[str, Callable[[], Any]]:
    from hudi_ops.format.meta_client import MetaClient
    from hudi_ops.read.clean_planner import next_clean
    from hudi_ops.read.service_work import (
        archive_work,
        clean_work,
        clustering_schedule_work,
        plan_execution_work,
    )
    from hudi_ops.read.table_need import measure as measure_need
    from hudi_ops.read.table_overview import TableOverview
    from hudi_ops.sources.files import ingest_work
    from hudi_ops.storage import Storage

    def services_tick() -> None:
        # the services DAG of a COPY_ON_WRITE table, as its four operators ask: each opens the table itself
        clustering_schedule_work(MetaClient.open(table, s3=s3), ARCHIVAL)
        plan_execution_work(MetaClient.open(table, s3=s3), "clustering")
        clean_work(MetaClient.open(table, s3=s3), ARCHIVAL)
        archive_work(MetaClient.open(table, s3=s3), ARCHIVAL)

    def group_tick() -> None:
        # a services group's tick, per member table: one look answers every service (hudi_ops.read.table_need)
        measure_need(MetaClient.open(table, s3=s3), dict.fromkeys(("clustering", "clean", "archive"), ARCHIVAL))

    out: dict[str, Callable[[], Any]] = {
        "ingest tick": lambda: ingest_work(table, Storage.for_uri(source), "parquet", s3=s3),
        "services tick": services_tick,
        "group tick": group_tick,
        "timeline page": lambda: TableOverview.load(table, clean_options=ARCHIVAL, s3=s3),
        "next clean": lambda: next_clean(MetaClient.open(table, s3=s3), ARCHIVAL),
    }
    return out


QUESTIONS = ("ingest tick", "services tick", "group tick", "timeline page", "next clean")
KINDS = ("LIST", "GET", "HEAD", "other")
SERVER_ENV: dict[str, str] = {}  # the running server's, for the processes that ask


def ask(question: str, table: str, source: Path, times: int) -> None:
    """In a process of its own, as each Airflow task is: `question`, `times` times."""
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from storage_calls import questions; "
              "from hudi_ops.s3_settings import S3Settings; from pathlib import Path; import os; "
              "s3 = S3Settings(endpoint=os.environ['AWS_ENDPOINT_URL'], region='us-east-1', path_style=True, "
              "access_key_id=os.environ['AWS_ACCESS_KEY_ID'], secret_access_key=os.environ['AWS_SECRET_ACCESS_KEY']); "
              "q = questions(sys.argv[3], s3, Path(sys.argv[4]))[sys.argv[2]]; [q() for _ in range(int(sys.argv[5]))]")
    subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent), question, table, str(source), str(times)],
                   check=True, env={**os.environ, **SERVER_ENV})


def measure(table: str, source: Path) -> dict[str, dict[str, dict[str, int]]]:
    """Each question's calls in a new process (cold), and when asked again in the same one (warm: the
    control plane keeps completed commits' metadata, which never changes, for the process's life)."""
    out = {}
    for name in QUESTIONS:
        counts = []
        for times in (1, 2):
            with counted() as requests:
                ask(name, table, source, times)
            counts.append(requests.calls)
        cold, both = counts
        out[name] = {"cold": {kind: cold[kind] for kind in KINDS},
                     "warm": {kind: both[kind] - cold[kind] for kind in KINDS}}
    return out


def main(argv: list[str]) -> int:
    commits = int(argv[0]) if argv else 500
    half, full = build(commits)
    requests = logging.getLogger("werkzeug")  # the server logs each request here, which `counted` reads
    requests.setLevel(logging.INFO)
    requests.addHandler(logging.NullHandler())  # and werkzeug adds no handler printing them
    with S3Server() as server:
        server.create_bucket(BUCKET)
        SERVER_ENV.update(server.env())
        figures = {}
        for label, table in ((f"{commits // 2} commits, none archived", half),
                             (f"{commits} commits, half archived", full)):
            uri = upload(server, table, label.split(",")[0].replace(" ", "-"))
            figures[label] = measure(uri, (table.parent.parent / "landing").resolve())
        small, large = figures.values()
        growth = {q: round(sum(large[q]["cold"].values()) / max(1, sum(small[q]["cold"].values())), 2)
                  for q in small}
        print(json.dumps({"benchmark": "storage_calls", "tables": figures, "growth": growth}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
