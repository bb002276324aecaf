"""Sample messages for `make up`'s example stream: a burst of trips as JSON objects goes to a Kafka topic
every minute (new trips, and new fares for some of the burst before), keyed by trip, so that the example
Kafka-fed table's ingest has messages to run on. The platform makes the topic."""

from __future__ import annotations

import datetime as dt
import json
import random

from hudi_ops.local.repeating import Repeating
from hudi_ops.local.sample_trips import CITIES

EVERY_S = 60.0
TRIPS_PER_BURST = 50


class SampleStream(Repeating):
    """`start()` sends a burst now and every `every_s` seconds until `stop()`; `send()` sends one."""

    def __init__(self, bootstrap_servers: str, topic: str, *, every_s: float = EVERY_S) -> None:
        super().__init__(every_s, f"sample stream to topic {topic}")
        self.bootstrap_servers, self.topic = bootstrap_servers, topic
        self.sent = 0

    def send(self, now: dt.datetime | None = None) -> int:
        """One burst: new trips, and a new fare for a tenth of the burst before's; how many messages."""
        from confluent_kafka import Producer

        now = now or dt.datetime.now(dt.UTC)
        n, pick = self.sent, random.Random(self.sent)
        earlier = pick.sample(range((n - 1) * TRIPS_PER_BURST, n * TRIPS_PER_BURST), TRIPS_PER_BURST // 10) if n else []
        ids = [*range(n * TRIPS_PER_BURST, (n + 1) * TRIPS_PER_BURST), *earlier]
        producer = Producer({"bootstrap.servers": self.bootstrap_servers})
        for i in ids:
            trip = {"trip_id": f"stream-{i:08d}", "dt": now.date().isoformat(), "ts": int(now.timestamp() * 1000),
                    "fare": round(pick.uniform(5, 60), 2), "city": CITIES[i % len(CITIES)]}
            producer.produce(self.topic, key=trip["trip_id"].encode(), value=json.dumps(trip).encode())
        if producer.flush(30):
            raise RuntimeError(f"the broker at {self.bootstrap_servers} took not all of a burst")
        self.sent += 1
        return len(ids)

    def once(self) -> int:
        return self.send()
