"""A Kafka-fed ingest DAG that runs when its topic has new messages: an Asset whose AssetWatcher is the
Kafka provider's message-queue trigger (`KafkaMessageQueueTrigger`, run by Airflow's triggerer).

The trigger's consumer reads the topic with the connection's `group.id` and commits what it read; it only
says "new messages" (topic, partition and offset in the asset event, never the value). The ingest reads
from the table's own checkpoint, whatever that group's offsets, and its idle check skips a run the
messages of which an earlier run already took.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import Asset, AssetWatcher


def new_message(message: Any) -> dict[str, Any] | None:
    """The trigger's `apply_function`: a message with a value is news (a tombstone carries no row)."""
    if message.value() is None:
        return None
    return {"topic": message.topic(), "partition": message.partition(), "offset": message.offset()}


def new_messages_asset(table: str, topics: tuple[str, ...], conn_id: str) -> Asset:
    """The Asset a table's ingest DAG is scheduled on, updated by the triggerer on each new message of its
    topics."""
    from airflow.providers.apache.kafka.triggers.msg_queue import KafkaMessageQueueTrigger

    trigger = KafkaMessageQueueTrigger(topics=list(topics), kafka_config_id=conn_id,
                                       apply_function=f"{__name__}.{new_message.__name__}")
    return Asset(name=f"hudi-ingest:{table}:kafka:{','.join(topics)}",
                 watchers=[AssetWatcher(name=f"hudi_ingest__{table}__messages", trigger=trigger)])
