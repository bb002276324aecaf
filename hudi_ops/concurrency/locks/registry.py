"""Which lock provider a writer uses: `hoodie.write.lock.provider`, by Hudi's Java class names."""

from __future__ import annotations

import posixpath

from hudi_ops.concurrency.locks.base import LockProvider
from hudi_ops.concurrency.locks.filesystem import (
    FILESYSTEM_LOCK_EXPIRE,
    FILESYSTEM_LOCK_PATH,
    FileSystemBasedLockProvider,
)
from hudi_ops.concurrency.locks.in_process import InProcessLockProvider
from hudi_ops.config import HoodieConfig, str_key
from hudi_ops.errors import ConfigError
from hudi_ops.storage import Storage

_PACKAGE = "org.apache.hudi.client.transaction.lock."
IN_PROCESS = _PACKAGE + "InProcessLockProvider"
FILE_SYSTEM = _PACKAGE + "FileSystemBasedLockProvider"
ZOOKEEPER = _PACKAGE + "ZookeeperBasedLockProvider"
LOCK_PROVIDER = str_key("hoodie.write.lock.provider", IN_PROCESS)


def lock_provider(config: HoodieConfig, storage: Storage, table_name: str) -> LockProvider:
    """The configured provider for the table at `storage`; names without the package are accepted too."""
    name = config.get(LOCK_PROVIDER) or IN_PROCESS
    full = name if "." in name else _PACKAGE + name
    if full == IN_PROCESS:
        return InProcessLockProvider(storage.table_id)
    if full == FILE_SYSTEM:
        folder = config.get(FILESYSTEM_LOCK_PATH)
        lock_dir = Storage.for_uri(folder) if folder else _meta_folder(storage)
        return FileSystemBasedLockProvider(lock_dir, expire_minutes=config.require(FILESYSTEM_LOCK_EXPIRE))
    if full == ZOOKEEPER:
        from hudi_ops.concurrency.locks.zookeeper import ZookeeperBasedLockProvider  # needs kazoo only here

        return ZookeeperBasedLockProvider.from_config(config, table_name=table_name)
    raise ConfigError(
        f"hoodie.write.lock.provider={name} is not supported; use {IN_PROCESS} (threads of one process), "
        f"{FILE_SYSTEM} (processes on one host) or {ZOOKEEPER}"
    )


def _meta_folder(storage: Storage) -> Storage:
    return Storage(storage.fs, posixpath.join(storage.root, ".hoodie"), storage.uri_of(".hoodie"))
