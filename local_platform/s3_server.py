"""A local S3 server on loopback, for the tests and the demo: moto's standalone server (PyPI's
`moto[server]`), started in this process on a free port, with no Docker.

Chosen over s3proxy (Maven) for what Hudi needs of S3 and for its cost: Hudi's writer on s3a, the
control plane on pyarrow and hudi-rs all work against it (tests/integration/test_s3.py,
test_concurrent_writers.py), through ListObjectsV2 with delimiters and 1,000-key pages, HEAD and
range reads; it runs in the test's own process, where s3proxy would be one more JVM beside Spark's
on two cores. Hudi needs no conditional writes here: its optimistic concurrency takes the ZooKeeper
lock, and no hudi-ops writer relies on S3's If-None-Match. Everything lives in memory: a server's
buckets go when it stops.
"""

from __future__ import annotations

import secrets

from hudi_ops.errors import ConfigError
from hudi_ops.s3_settings import S3Settings

REGION = "us-east-1"


class S3Server:
    def __init__(self) -> None:
        # per server, made up: moto accepts any keys, and nothing real may be used in tests
        self.access_key, self.secret_key = "test-" + secrets.token_hex(4), secrets.token_urlsafe(16)
        self._server = None
        self.endpoint = ""

    def start(self) -> S3Server:
        try:
            from moto.server import ThreadedMotoServer
        except ImportError as e:
            raise ConfigError("the local S3 server needs moto: pip install 'moto[server]'") from e
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        return self

    def settings(self) -> S3Settings:
        """How to reach it: its endpoint, by path, with its keys."""
        return S3Settings(endpoint=self.endpoint, region=REGION, path_style=True, access_key_id=self.access_key,
                          secret_access_key=self.secret_key)

    def env(self) -> dict[str, str]:
        """What a process needs to reach it: s3a, pyarrow, hudi-rs and boto3 all read these."""
        return self.settings().env()

    def create_bucket(self, name: str) -> None:
        import boto3

        boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION, aws_access_key_id=self.access_key,
                     aws_secret_access_key=self.secret_key).create_bucket(Bucket=name)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
