"""Hadoop's s3a connector for Spark 3.5 (Hadoop 3.3.4): the jars that let Hudi's writer reach
`s3a://` tables, and the Spark settings of an S3 endpoint.

The connector must match pyspark's Hadoop client (`hadoop-client-api-3.3.4`), and the AWS SDK bundle is
the one hadoop-aws 3.3.4 was built against. Both are fetched once with Maven into the jar cache, like
Hudi's bundle (`python -m hudi_ops.jars fetch s3a`). Credentials are never Spark settings (they would be
on spark-submit's command line): s3a reads them from the environment (`AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY`). """

from __future__ import annotations

from hudi_ops.maven import MavenArtifact, cached_jars
from hudi_ops.s3_settings import S3Settings

HADOOP_AWS = MavenArtifact("org.apache.hadoop", "hadoop-aws", "3.3.4")
AWS_SDK_BUNDLE = MavenArtifact("com.amazonaws", "aws-java-sdk-bundle", "1.12.262")
ARTIFACTS = (HADOOP_AWS, AWS_SDK_BUNDLE)


def s3a_jars() -> tuple[str, ...]:
    """The connector's jars in the jar cache, as absolute paths."""
    return cached_jars(ARTIFACTS, "the s3a connector", "s3a")


def s3a_conf(s3: S3Settings) -> dict[str, str]:
    """Spark settings for s3a on `s3`'s endpoint (None: AWS's own). No keys: those go in the environment."""
    conf: dict[str, str] = {}
    if s3.endpoint:
        conf["spark.hadoop.fs.s3a.endpoint"] = s3.endpoint
        conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] = str(not s3.plain_http).lower()
    if s3.region:
        conf["spark.hadoop.fs.s3a.endpoint.region"] = s3.region
    if s3.path_style:
        conf["spark.hadoop.fs.s3a.path.style.access"] = "true"
    return conf
