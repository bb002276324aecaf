"""An Airflow connection of the Amazon provider's `aws` type, as the S3 settings of a table on S3.

The provider's own conventions, so one connection serves both it and hudi-ops (the provider itself is
not needed): login and password are the access key id and secret; the extras `endpoint_url` (or
`service_config.s3.endpoint_url`), `region_name`, `aws_session_token`, and `config_kwargs.s3.addressing_style`
("path" for buckets by path, as most S3 servers of one's own serve them). A connection without keys
leaves them to the AWS chain of each process (environment, profile, instance role).
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

from hudi_ops.errors import ConfigError
from hudi_ops.s3_settings import S3Settings

CONN_TYPE = "aws"


def aws_connection(s3: S3Settings) -> dict[str, Any]:
    """The connection (in Airflow's JSON form, e.g. for an AIRFLOW_CONN_* variable) that `s3_settings`
    reads back as `s3`."""
    extra: dict[str, Any] = {key: value for key, value in (("endpoint_url", s3.endpoint), ("region_name", s3.region),
                                                           ("aws_session_token", s3.session_token)) if value}
    if s3.path_style:
        extra["config_kwargs"] = {"s3": {"addressing_style": "path"}}
    conn: dict[str, Any] = {"conn_type": CONN_TYPE, "extra": extra}
    if s3.access_key_id:
        conn |= {"login": s3.access_key_id, "password": s3.secret_access_key}
    return conn


def table_s3(aws_conn_id: str | None) -> S3Settings | None:
    """The S3 settings of a table's `aws_conn_id`; None (no connection): the AWS chain, or not on S3."""
    return s3_settings(aws_conn_id) if aws_conn_id else None


#: the provider's ways to another identity (a role, a profile): hudi-ops' jobs could not follow them
_OTHER_IDENTITY = ("role_arn", "profile_name", "assume_role_method", "assume_role_kwargs")


def s3_settings(conn_id: str) -> S3Settings:
    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        raise ConfigError(f"no Airflow connection {conn_id!r}: add one of type {CONN_TYPE!r} (Admin > Connections, "
                          f"or AIRFLOW_CONN_{conn_id.upper()}), or drop aws_conn_id from the table") from None
    if conn.conn_type != CONN_TYPE:
        raise ConfigError(f"the connection {conn_id!r} is of type {conn.conn_type!r}; a table on S3 needs one of type "
                          f"{CONN_TYPE!r} (Amazon Web Services): login = access key id, password = secret, extra "
                          '{"endpoint_url": ..., "region_name": ..., "config_kwargs": {"s3": {"addressing_style": '
                          '"path"}}}')
    extra: dict[str, Any] = conn.extra_dejson
    s3_service = (extra.get("service_config") or {}).get("s3") or {}
    endpoint = s3_service.get("endpoint_url") or extra.get("endpoint_url")
    if endpoint and "://" not in endpoint:
        raise ConfigError(f"the connection {conn_id!r} has endpoint_url {endpoint!r}; give it with its scheme, e.g. "
                          f"https://{endpoint}")
    other = [key for key in _OTHER_IDENTITY if extra.get(key)]
    if other:
        raise ConfigError(f"the connection {conn_id!r} sets {', '.join(other)}: hudi-ops' jobs reach S3 with the "
                          "connection's keys or the machine's own AWS chain, not another identity; give the keys "
                          "of that role, or leave the connection without keys and let the nodes' role serve")
    addressing = ((extra.get("config_kwargs") or {}).get("s3") or {}).get("addressing_style")
    key_id = conn.login or extra.get("aws_access_key_id")
    secret = conn.password or extra.get("aws_secret_access_key")
    if bool(key_id) != bool(secret):
        raise ConfigError(f"the connection {conn_id!r} has {'an access key id' if key_id else 'a secret'} without "
                          f"{'its secret (password)' if key_id else 'its access key id (login)'}: give both, or "
                          "neither to use each process's AWS chain")
    return S3Settings(endpoint=endpoint, region=extra.get("region_name"), path_style=addressing == "path",
                      access_key_id=key_id, secret_access_key=secret, session_token=extra.get("aws_session_token"))
