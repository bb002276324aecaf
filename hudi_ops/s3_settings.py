"""How to reach an S3 store: endpoint, region, addressing and keys, for every reader and writer of a table.

One value, three uses: the Spark jobs (s3a's settings, without keys, and the keys in the spark-submit's
environment, never on its command line), the control plane's pyarrow file system, and hudi-rs. Where it
has no keys, each of them falls back to its own AWS chain (environment, profile, instance role).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow.fs as pafs


@dataclass(frozen=True)
class S3Settings:
    endpoint: str | None = None  # None: AWS's own
    region: str | None = None
    path_style: bool = False  # buckets by path (most S3 servers of one's own), not as host names
    access_key_id: str | None = field(default=None, repr=False)
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)

    @property
    def plain_http(self) -> bool:
        return bool(self.endpoint and self.endpoint.startswith("http://"))

    def env(self) -> dict[str, str]:
        """The environment of a process that reaches the store: s3a, pyarrow, hudi-rs and boto3 read it."""
        values = {"AWS_ACCESS_KEY_ID": self.access_key_id, "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
                  "AWS_SESSION_TOKEN": self.session_token, "AWS_REGION": self.region,
                  "AWS_DEFAULT_REGION": self.region, "AWS_ENDPOINT_URL": self.endpoint,
                  "AWS_ALLOW_HTTP": "true" if self.plain_http else None}  # hudi-rs refuses plain HTTP without it
        return {key: value for key, value in values.items() if value}

    def filesystem(self) -> pafs.S3FileSystem:
        """pyarrow's S3 with these settings; what they leave out, pyarrow takes from its AWS chain."""
        kwargs: dict[str, object] = {"force_virtual_addressing": not self.path_style and bool(self.endpoint)}
        if self.access_key_id and self.secret_access_key:
            kwargs |= {"access_key": self.access_key_id, "secret_key": self.secret_access_key,
                       "session_token": self.session_token}
        if self.region:
            kwargs["region"] = self.region
        if self.endpoint:
            scheme, _, host = self.endpoint.partition("://")
            kwargs |= {"endpoint_override": host.rstrip("/"), "scheme": scheme}
        return pafs.S3FileSystem(**kwargs)

    def hudi_rs_options(self) -> dict[str, str]:
        """hudi-rs' storage options (its `aws_*` names)."""
        return {key.lower(): value for key, value in self.env().items() if key != "AWS_DEFAULT_REGION"}
