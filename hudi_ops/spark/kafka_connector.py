"""Spark's Kafka reader for Spark 3.5 (spark-sql-kafka-0-10) and its Avro functions (spark-avro): the jars a
Kafka ingest's Spark needs.

Maven serves the connector up to 3.5.7 here (not 3.5.9), which reads Kafka well on pyspark 3.5.x; with
it its Kafka client and pool. spark-avro (`from_avro`, for Avro values) is Spark 3.5.9's, the pyspark
that constraints.txt installs: it converts to Spark's internal rows. Hudi's bundle carries a copy of
it under its own package, so the two never meet. Fetched once with Maven into the jar cache, like
Hudi's bundle (`python -m hudi_ops.jars fetch kafka`). The reader's `kafka.*` settings, secrets among
them, are options of the job (its `--props` file), never spark-submit's command line.
"""

from __future__ import annotations

from hudi_ops.maven import MavenArtifact, cached_jars

SPARK_RELEASE = "3.5.7"
AVRO_RELEASE = "3.5.9"
ARTIFACTS = (
    MavenArtifact("org.apache.spark", "spark-sql-kafka-0-10_2.12", SPARK_RELEASE),
    MavenArtifact("org.apache.spark", "spark-token-provider-kafka-0-10_2.12", SPARK_RELEASE),
    MavenArtifact("org.apache.kafka", "kafka-clients", "3.4.1"),
    MavenArtifact("org.apache.commons", "commons-pool2", "2.11.1"),
    MavenArtifact("org.apache.spark", "spark-avro_2.12", AVRO_RELEASE),
)


def kafka_jars() -> tuple[str, ...]:
    """The connector's jars in the jar cache, as absolute paths."""
    return cached_jars(ARTIFACTS, "Spark's Kafka reader", "kafka")
