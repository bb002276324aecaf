"""An Airflow connection of the Hive provider's `hive_metastore` type, as the metastore a table's catalog
sync reaches: host (a name, or several separated by commas) and port (Hive's 9083 when empty) become
Hudi's `hoodie.datasource.hive_sync.metastore.uris`. The Hive provider's own default id,
`metastore_default`, so one connection serves its sensors and hudi-ops."""

from __future__ import annotations

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

from hudi_ops.errors import ConfigError
from hudi_ops.options.keys import MetaSyncConfig

CONN_TYPE = "hive_metastore"
DEFAULT_CONN_ID = "metastore_default"
DEFAULT_PORT = 9083


def metastore_options(conn_id: str) -> dict[str, str]:
    """The metastore's URIs from the connection `conn_id`, as the sync's option."""
    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        raise ConfigError(f"no Airflow connection {conn_id!r}: add one of type {CONN_TYPE} with the Hive "
                          f"Metastore's host and port ({DEFAULT_PORT}), or name another in the table's "
                          "`catalog.hive_metastore_conn_id`") from None
    return {MetaSyncConfig.METASTORE_URIS.name: metastore_uris(conn.host or "", conn.port, conn_id)}


def metastore_uris(host: str, port: int | None, conn_id: str = "") -> str:
    hosts = [h.strip() for h in host.split(",") if h.strip()]
    if not hosts:
        raise ConfigError(f"the Hive Metastore connection {conn_id!r} names no host: set its host "
                          "(one, or several separated by commas)")
    return ",".join(h if h.startswith("thrift://") else f"thrift://{h}:{port or DEFAULT_PORT}" for h in hosts)
