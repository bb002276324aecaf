"""Writer and reader processes for the multi-writer tests (run as `python -m tests.integration.multi_writer`).

A writer upserts small batches of overlapping keys and logs, per batch, the rows and the outcome
(committed with its instant times, or a conflict). A reader takes snapshots until told to stop and
logs each one. The test compares both logs with a serial replay of the committed batches.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import pyarrow as pa

from hudi_ops import HudiTable, WriteConflictError
from hudi_ops.errors import LockAcquisitionError


def write(path: str, writer: int, commits: int, keys: int, log: Path, options: dict[str, str]) -> None:
    table = HudiTable.open(path)
    rng = random.Random(writer)
    with log.open("w") as out:
        for seq in range(commits):
            ids = rng.sample(range(keys), 3)
            rows = [{"id": i, "v": f"w{writer}-{seq}", "p": f"p{i % 4}"} for i in ids]
            try:
                r = table.upsert(pa.Table.from_pylist(rows), options=options)
                out.write(json.dumps({"rows": rows, "instant": r.instant_time, "completed": r.completion_time}) + "\n")
            except WriteConflictError as e:
                out.write(json.dumps({"rows": rows, "conflict": str(e)}) + "\n")
            except LockAcquisitionError as e:  # the lock service is down: this batch is not written
                out.write(json.dumps({"rows": rows, "lock_error": str(e)}) + "\n")
            out.flush()


def read(path: str, stop: Path, log: Path) -> None:
    table = HudiTable.open(path)
    with log.open("w") as out:
        while not stop.exists():
            snap = table.read(columns=["id", "v"]).to_pylist()
            out.write(json.dumps(sorted((r["id"], r["v"]) for r in snap)) + "\n")
            time.sleep(0.01)


if __name__ == "__main__":
    role, path, *rest = sys.argv[1:]
    if role == "writer":
        write(path, int(rest[0]), int(rest[1]), int(rest[2]), Path(rest[3]), json.loads(rest[4]))
    else:
        read(path, Path(rest[0]), Path(rest[1]))
