"""A bucket on a local S3 server, for tables on object storage (`s3a://`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hudi_ops.spark.s3a import s3a_conf
from local_platform.s3_server import S3Server


@dataclass(frozen=True)
class S3Lake:
    """A bucket on a running local S3 server: table URIs in it, and what a spark-submit needs to reach it
    (the keys through its environment only)."""

    server: S3Server
    bucket: str

    def uri(self, name: str) -> str:
        return f"s3a://{self.bucket}/{name}"

    def job_kwargs(self) -> dict[str, Any]:
        """`Job.start`'s S3 (the launch adds s3a's jars and settings, as the operators' does) and environment."""
        return {"s3": self.server.settings(), "env": self.server.env()}

    def configure(self, spark: Any) -> None:
        """Point the shared session's s3a at this server. A bucket of its own per test keeps Hadoop's file
        system cache (one instance per bucket) from handing out an earlier server's."""
        hadoop = spark.sparkContext._jsc.hadoopConfiguration()
        settings = {key.removeprefix("spark.hadoop."): value
                    for key, value in s3a_conf(self.server.settings()).items()}
        settings |= {"fs.s3a.access.key": self.server.access_key, "fs.s3a.secret.key": self.server.secret_key}
        for key, value in settings.items():
            hadoop.set(key, value)
