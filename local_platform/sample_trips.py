"""Sample files for `make up`'s example table: a parquet file of trips lands in its source folder every few
minutes (new trips, and fares corrected for some of the last file's), so that its ingest DAG has work on
each tick and the timeline view shows a live table."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from local_platform.repeating import Repeating

#: how often a file lands, and how many trips it holds
EVERY_S = 120.0
TRIPS_PER_FILE = 200
SCHEMA = pa.schema([("trip_id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()),
                    ("city", pa.string())])
CITIES = ("amsterdam", "lisbon", "oslo", "porto")


class SampleFeed(Repeating):
    """`start()` lands a file now and every `every_s` seconds until `stop()`; `land()` lands one."""

    def __init__(self, landing: Path, *, every_s: float = EVERY_S) -> None:
        super().__init__(every_s, f"sample trips into {landing}")
        self.landing = Path(landing)
        # a restart goes on after the newest file there (whatever was removed before it)
        self.landed = 1 + max((int(p.stem.split("-")[1]) for p in self.landing.glob("trips-*.parquet")), default=-1)

    def land(self, now: dt.datetime | None = None) -> Path:
        """One file: new trips, and a new fare for a tenth of the previous file's (same key, same day)."""
        now = now or dt.datetime.now(dt.UTC)
        n, pick = self.landed, random.Random(self.landed)
        ids = range(n * TRIPS_PER_FILE, (n + 1) * TRIPS_PER_FILE)
        new = pa.table({"trip_id": [f"trip-{i:08d}" for i in ids], "dt": [now.date().isoformat()] * len(ids),
                        "city": [CITIES[i % len(CITIES)] for i in ids]})
        previous = self.landing / f"trips-{n - 1:06d}.parquet"
        if previous.is_file():
            earlier = pq.read_table(previous, columns=["trip_id", "dt", "city"])
            new = pa.concat_tables([new, earlier.take(pick.sample(range(earlier.num_rows), earlier.num_rows // 10))])
        rows = new.append_column("ts", pa.array([int(now.timestamp() * 1000)] * new.num_rows, pa.int64()))
        rows = rows.append_column("fare", pa.array([round(pick.uniform(5, 60), 2) for _ in range(new.num_rows)]))
        self.landing.mkdir(parents=True, exist_ok=True)
        path = self.landing / f"trips-{n:06d}.parquet"
        partial = path.with_suffix(".partial")  # the ingest never sees half a file: it reads *.parquet
        pq.write_table(rows.select(SCHEMA.names).cast(SCHEMA), partial)
        partial.rename(path)
        self.landed += 1
        return path

    def once(self) -> Path:
        return self.land()

    def failed(self, error: Exception) -> None:
        self.landed += 1  # past a file that cannot be read
