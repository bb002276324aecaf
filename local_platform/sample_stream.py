"""Sample messages for `make up`'s example stream: a burst of trips as JSON objects goes to a Kafka topic
every minute (new trips, and new fares for some of the burst before), keyed by trip, so that the example
Kafka-fed table's ingest has messages to run on. The platform makes the topic."""

from __future__ import annotations

import datetime as dt
import random

from local_platform.kafka_server import produce_json
from local_platform.repeating import Repeating
from local_platform.sample_trips import CITIES

EVERY_S = 60.0
TRIPS_PER_BURST = 50


class SampleStream(Repeating):
    """`start()` sends a burst now and every `every_s` seconds until `stop()`; `send()` sends one."""

    def __init__(self, bootstrap_servers: str, topic: str, *, every_s: float = EVERY_S) -> None:
        super().__init__(every_s, f"sample stream to topic {topic}")
        self.bootstrap_servers, self.topic = bootstrap_servers, topic
        self.sent = 0
        #: this start's trips are new keys, whatever an earlier start of make up sent
        self.run = dt.datetime.now(dt.UTC).strftime("%Y%m%d%H%M%S")
        self._last: dict[str, str] = {}  # the last burst's new trips and their days

    def send(self, now: dt.datetime | None = None) -> int:
        """One burst: new trips, and a new fare for a tenth of the burst before's (same key, same day);
        how many messages."""
        now = now or dt.datetime.now(dt.UTC)
        n, pick = self.sent, random.Random(self.sent)
        day = now.date().isoformat()
        new = {f"stream-{self.run}-{n * TRIPS_PER_BURST + i:06d}": day for i in range(TRIPS_PER_BURST)}
        trips = {**new, **dict(pick.sample(sorted(self._last.items()), len(self._last) // 10))}
        produce_json(self.bootstrap_servers, self.topic, key="trip_id", rows=[
            {"trip_id": trip_id, "dt": trip_day, "ts": int(now.timestamp() * 1000),
             "fare": round(pick.uniform(5, 60), 2), "city": CITIES[i % len(CITIES)]}
            for i, (trip_id, trip_day) in enumerate(trips.items())])
        self._last = new
        self.sent += 1
        return len(trips)

    def once(self) -> int:
        return self.send()
