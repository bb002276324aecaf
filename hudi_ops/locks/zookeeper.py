"""Hudi's ZookeeperBasedLockProvider: a Curator `InterProcessMutex` on `<base_path>/<lock_key>`, with kazoo.

The lock is the recipe Apache Curator implements (`StandardLockInternalsDriver`), rebuilt from kazoo
primitives so that Hudi's Java writers and hudi-ops' Python lock holders (`hudi-ops lock hold`, the demo)
exclude each other on the same znode, and hudi-ops' readers of the queue (`hudi-ops lock show`, the
timeline view) see it in the order Curator grants the lock:

- every contender creates an EPHEMERAL_SEQUENTIAL child `_c_<uuid4>-lock-<10-digit seq>` (Curator's
  "protected" name: after a connection loss during the create, the uuid finds the node again instead of
  leaving an orphan that would block everyone for the rest of the session);
- children are ordered by the text after the LAST `lock-` (the whole name when there is none), exactly
  like Curator; the first one holds the lock, every other one watches its immediate predecessor;
- release deletes the own node; the end of the session (expiry, close) deletes it too.

kazoo's own `Lock` recipe names its nodes `<hex>__lock__<seq>`, which Curator sorts by the whole name, so it
is not used. The state of the connection is tracked with a kazoo listener: a lost session means the lock
is lost, and a suspended connection means it may be; `assert_held` refuses in both cases.

Whenever the fate of an own node is uncertain (a create whose answer never came, a delete that could not be
sent) the session is dropped rather than risking a stray node: the server then removes the node when the
session ends, and the next `acquire` opens a new session.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, NoNodeError, OperationTimeoutError
from kazoo.retry import KazooRetry, RetryFailedError

from hudi_ops.errors import ConfigError, LockAcquisitionError, LockHeldError
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import (
    LOCK_NUM_RETRIES,
    LOCK_RETRY_MAX_WAIT_MS,
    LOCK_RETRY_WAIT_MS,
    ZK_BASE_PATH,
    ZK_CONNECTION_TIMEOUT_MS,
    ZK_LOCK_KEY,
    ZK_PORT,
    ZK_SESSION_TIMEOUT_MS,
    ZK_URL,
    WriteConfig,
)

#: Curator's `ProtectedUtils.PROTECTED_PREFIX` and `InterProcessMutex.LOCK_NAME`
PROTECTED_PREFIX = "_c_"
LOCK_NAME = "lock-"
_MIN_CALL_S = 1.0


def lock_node_sort_key(name: str) -> str:
    """Curator's `StandardLockInternalsDriver.fixForSorting`: the text after the last `lock-`, else the name."""
    index = name.rfind(LOCK_NAME)
    return name[index + len(LOCK_NAME) :] if index >= 0 else name


def connect_string(url: str, port: int | None = None) -> str:
    """`url` with `port` appended to every host that names none (the chroot suffix is kept).

    Java's ZookeeperBasedLockProvider hands the url to Curator as it is (a host without a port means
    2181) and never reads the port key, so a port other than 2181 for a port-less host would send
    Java writers and hudi-ops to different servers, where they would not exclude each other: that
    combination is refused.
    """
    hosts, slash, chroot = url.strip().partition("/")
    parts = []
    for host in hosts.split(","):
        host = host.strip()
        if not host:
            continue
        has_port = "]:" in host if host.startswith("[") else ":" in host
        if not has_port and port not in (None, 2181):
            raise ConfigError(
                f"{ZK_URL.name}={url!r} names no port while {ZK_PORT.name}={port}: Java Hudi writers ignore the "
                f"port key and would use 2181; write the port into the url (e.g. {host}:{port})"
            )
        parts.append(host if has_port or port is None else f"{host}:{port}")
    if not parts:
        raise ConfigError(f"{ZK_URL.name}={url!r} names no host; write e.g. zk1:2181,zk2:2181")
    return ",".join(parts) + slash + chroot


class _LockLost(Exception):
    """The session ended while a lock node of ours was alive (internal: stops retries at once)."""


class ZookeeperBasedLockProvider:
    def __init__(
        self,
        *,
        url: str,
        base_path: str,
        lock_key: str,
        port: int | None = None,
        session_timeout_ms: int = 60_000,
        connection_timeout_ms: int = 15_000,
        wait_time_ms_between_retry: int = 1_000,
        max_wait_time_ms_between_retry: int = 16_000,
        num_retries: int = 15,
    ) -> None:
        if not base_path.startswith("/") or (base_path.endswith("/") and base_path != "/"):
            raise ConfigError(
                f"{ZK_BASE_PATH.name}={base_path!r} is not an absolute znode path; write e.g. /hudi/locks"
            )
        if not lock_key or lock_key.startswith("/") or lock_key.endswith("/"):
            raise ConfigError(f"{ZK_LOCK_KEY.name}={lock_key!r} is not a znode name; write e.g. the table name")
        self.url = connect_string(url, port)
        self.lock_path = base_path.rstrip("/") + "/" + lock_key
        self.session_timeout_s = session_timeout_ms / 1000
        self.connection_timeout_s = connection_timeout_ms / 1000
        # Curator's BoundedExponentialBackoffRetry(base, cap, n): n retries, so n + 1 attempts
        self._retry = {
            "max_tries": num_retries + 1,
            "delay": wait_time_ms_between_retry / 1000,
            "backoff": 2,
            "max_delay": max_wait_time_ms_between_retry / 1000,
        }
        self._guard = threading.RLock()
        self._wake = threading.Event()  # set by watches on the predecessor and by connection state changes
        self._client: KazooClient | None = None
        self._node: str | None = None  # our lock node while we wait for or hold the lock
        self._held = False
        self._session_id: int | None = None  # the session that owns `_node`
        self._lost: str | None = None  # why the lock (or our place in the queue) was lost
        deadline = time.monotonic() + self.connection_timeout_s
        self._connect()
        try:
            self._call(deadline, self._client_or_raise().ensure_path_async, self.lock_path)
        except (KazooException, _LockLost) as e:
            self._drop_session()
            raise LockAcquisitionError(
                f"could not create the lock znode {self.lock_path} on ZooKeeper {self.url}: {_describe(e)}"
            ) from e

    @classmethod
    def from_config(cls, config: HoodieConfig, *, table_name: str | None = None) -> ZookeeperBasedLockProvider:
        """The provider for `hoodie.write.lock.zookeeper.*`; the lock key defaults to the table name, like Hudi."""
        url, base_path = config.require(ZK_URL), config.require(ZK_BASE_PATH)
        lock_key = config.get(ZK_LOCK_KEY) or table_name or config.get(WriteConfig.TABLE_NAME)
        if not lock_key:
            raise ConfigError(f"{ZK_LOCK_KEY.name} is required (or hoodie.table.name to infer it from)")
        return cls(
            url=url,
            base_path=base_path,
            lock_key=lock_key,
            port=config.get(ZK_PORT),
            session_timeout_ms=config.require(ZK_SESSION_TIMEOUT_MS),
            connection_timeout_ms=config.require(ZK_CONNECTION_TIMEOUT_MS),
            wait_time_ms_between_retry=config.require(LOCK_RETRY_WAIT_MS),
            max_wait_time_ms_between_retry=config.require(LOCK_RETRY_MAX_WAIT_MS),
            num_retries=config.require(LOCK_NUM_RETRIES),
        )

    @property
    def session_id(self) -> int | None:
        """The current ZooKeeper session of this provider (None while it has none), for diagnostics."""
        client = self._client
        return client.client_id[0] if client is not None and client.client_id else None

    # -- connection ---------------------------------------------------------------------------------

    def _connect(self) -> None:
        try:
            client = KazooClient(
                hosts=self.url,
                timeout=self.session_timeout_s,
                connection_retry=dict(self._retry),
                command_retry=dict(self._retry),
            )
        except ValueError as e:
            raise ConfigError(f"{ZK_URL.name}={self.url!r} is not a ZooKeeper connect string: {e}") from None
        client.add_listener(lambda state: self._on_state(client, state))
        self._client = client
        try:
            client.start(timeout=self.connection_timeout_s)
        except client.handler.timeout_exception:
            self._client = None  # kazoo has stopped and closed it already
            raise LockAcquisitionError(
                f"could not connect to ZooKeeper at {self.url} within {self.connection_timeout_s:g}s "
                f"(check {ZK_URL.name} and {ZK_CONNECTION_TIMEOUT_MS.name})"
            ) from None

    def _on_state(self, client: KazooClient, state: str) -> None:
        """kazoo listener, run on kazoo's connection thread: record, never block."""
        if client is not self._client:
            return
        if state == KazooState.LOST and self._node is not None and self._lost is None:
            self._lost = f"the ZooKeeper session {_hex(self._session_id)} ended (expired or closed)"
        self._wake.set()

    def _client_or_raise(self) -> KazooClient:
        client = self._client
        if client is None:
            raise _LockLost("the ZooKeeper session was dropped")
        return client

    def _ensure_connected(self) -> KazooClient:
        """A connected client: a new session if the old one is gone, else wait for it to come back."""
        client = self._client
        if client is not None and client.state == KazooState.LOST:
            self._drop_session()
            client = None
        if client is None:
            self._connect()
            return self._client_or_raise()
        deadline = time.monotonic() + self.connection_timeout_s
        while True:
            self._wake.clear()
            if client.state == KazooState.CONNECTED:
                return client
            remaining = deadline - time.monotonic()
            if remaining <= 0 or client.state == KazooState.LOST:
                self._drop_session()
                raise LockAcquisitionError(
                    f"the connection to ZooKeeper at {self.url} did not come back within "
                    f"{self.connection_timeout_s:g}s ({ZK_CONNECTION_TIMEOUT_MS.name})"
                )
            self._wake.wait(remaining)

    def _drop_session(self) -> None:
        """Stop the client: the server deletes our ephemeral nodes when it ends the session."""
        client, self._client = self._client, None
        if client is None:
            return
        try:
            client.stop()
            client.close()
        except Exception:
            pass  # a client that fails to stop leaves the session to expire on the server

    def _call(self, deadline: float, op: Any, *args: Any, **kwargs: Any) -> Any:
        """Run `op` (a kazoo `*_async` method) under kazoo's retry of the configured policy, never past `deadline`.

        kazoo queues the requests made while it reconnects; waiting on their results with a timeout keeps a
        dead server from blocking us beyond the deadline.
        """
        return self._retry_until(deadline, lambda: self._result(op(*args, **kwargs), deadline))

    def _result(self, pending: Any, deadline: float) -> Any:
        """The answer of a kazoo async call, or OperationTimeoutError (retryable) when none came in time."""
        client = self._client_or_raise()
        try:
            return pending.get(timeout=max(0.0, min(deadline - time.monotonic(), self.session_timeout_s)))
        except client.handler.timeout_exception:
            raise OperationTimeoutError("no answer from ZooKeeper in time") from None

    def _retry_until(self, deadline: float, attempt: Any) -> Any:
        def guarded() -> Any:
            if self._lost is not None:
                raise _LockLost(self._lost)
            if time.monotonic() >= deadline:
                raise RetryFailedError("the time allowed ran out")
            return attempt()

        return KazooRetry(**self._retry, deadline=max(0.0, deadline - time.monotonic()))(guarded)

    # -- the lock -----------------------------------------------------------------------------------

    def acquire(self, timeout_s: float) -> None:
        with self._guard:
            if self._node is not None:
                raise LockAcquisitionError(
                    f"the ZooKeeper lock {self.lock_path} is already held through this provider ({self._node}); "
                    "release it first"
                )
            self._take(timeout_s)

    def requeue(self, timeout_s: float) -> None:
        """Held: take a place at the end of the line, then give up the turn held. Whoever waits now takes the
        lock before this provider holds it again; whoever comes later, after it."""
        with self._guard:
            held = self._node if self._held else None
            if held is None:
                raise LockAcquisitionError(f"the ZooKeeper lock {self.lock_path} is not held through this provider")
            self._node = None
            try:
                self._take(timeout_s, held)
            except BaseException:
                self._drop_session()  # the turn given up may still be ours: ending the session removes it
                raise

    def _take(self, timeout_s: float, held: str | None = None) -> None:
        """A node in line, then our turn; `held`, the node that holds the lock now, goes once ours is in line."""
        deadline = time.monotonic() + timeout_s
        client = self._ensure_connected()
        self._lost = None
        self._held = False
        self._session_id = client.client_id[0] if client.client_id else None
        protected = f"{PROTECTED_PREFIX}{uuid.uuid4()}-"
        self._node = f"{self.lock_path}/{protected}{LOCK_NAME}"  # placeholder until the create answers
        try:
            self._node = self._create_node(client, protected, _op_deadline(deadline))
            if held is not None:
                with contextlib.suppress(NoNodeError):  # an answer lost, then the retried delete
                    self._call(_op_deadline(deadline), client.delete_async, held)
            self._wait_for_turn(client, deadline, timeout_s)
            self._held = True
        except LockAcquisitionError:
            self._give_up()
            raise
        except (KazooException, _LockLost) as e:
            node = self._node
            connected = client.state == KazooState.CONNECTED
            self._give_up()
            raise LockAcquisitionError(
                f"could not take the ZooKeeper lock {self.lock_path} (our node {node}) within {timeout_s:g}s: "
                f"{_describe(e)}" + ("" if connected else f"; the connection to ZooKeeper at {self.url} is down")
            ) from e
        except BaseException:
            self._give_up()
            raise

    def _create_node(self, client: KazooClient, protected: str, deadline: float) -> str:
        """Create `<lock_path>/_c_<uuid>-lock-<seq>`; after a lost answer, find it again by its uuid."""
        sent = False

        def create_or_find() -> str:
            nonlocal sent
            if sent:
                for child in self._result(client.get_children_async(self.lock_path), deadline):
                    if child.startswith(protected):
                        return f"{self.lock_path}/{child}"
            sent = True
            path = f"{self.lock_path}/{protected}{LOCK_NAME}"
            return self._result(client.create_async(path, b"", ephemeral=True, sequence=True, makepath=True), deadline)

        return self._retry_until(deadline, create_or_find)

    def _wait_for_turn(self, client: KazooClient, deadline: float, timeout_s: float) -> None:
        assert self._node is not None
        name = self._node.rsplit("/", 1)[1]
        while True:
            self._wake.clear()  # before looking, so that a change after the look wakes the wait below
            if self._lost is not None:
                raise _LockLost(self._lost)
            children = self._call(_op_deadline(deadline), client.get_children_async, self.lock_path)
            ordered = sorted(children, key=lock_node_sort_key)
            if name not in ordered:
                raise _LockLost(f"our lock node {self._node} is gone (session expired?)")
            index = ordered.index(name)
            if index == 0:
                return
            predecessor = f"{self.lock_path}/{ordered[index - 1]}"
            if self._call(_op_deadline(deadline), client.exists_async, predecessor, watch=self._on_watch) is None:
                continue  # went away between the listing and the watch
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._wake.wait(remaining):
                raise LockHeldError(
                    f"could not take the ZooKeeper lock {self.lock_path} on {self.url} within {timeout_s:g}s: "
                    f"it is held by {self.lock_path}/{ordered[0]} and our node {self._node} waits behind "
                    f"{index} node(s), last {predecessor}"
                )

    def queue(self) -> list[str]:
        """The lock's nodes in line, holder first. Takes no provider lock, so another thread may be
        waiting in `acquire` meanwhile."""
        client = self._client_or_raise()
        try:
            children = client.get_children_async(self.lock_path).get(timeout=self.connection_timeout_s)
        except (KazooException, client.handler.timeout_exception) as e:
            raise LockAcquisitionError(
                f"could not list the queue of {self.lock_path} on {self.url}: {_describe(e)}"
            ) from e
        return sorted(children, key=lock_node_sort_key)

    def node_data(self, name: str) -> str:
        """What a contender wrote into its lock node (Hudi's writers: their host's address in Hudi 1.1,
        `application_id=<Spark app>` later; hudi-ops' Python: nothing); "" when the node is gone."""
        client = self._client_or_raise()
        try:
            data, _ = client.get_async(f"{self.lock_path}/{name}").get(timeout=self.connection_timeout_s)
        except NoNodeError:
            return ""
        except (KazooException, client.handler.timeout_exception) as e:
            raise LockAcquisitionError(f"could not read {self.lock_path}/{name} on {self.url}: {_describe(e)}") from e
        return data.decode("utf-8", "replace")

    def _on_watch(self, _event: object) -> None:
        self._wake.set()

    def _give_up(self) -> None:
        """Delete our node (waiting or held); drop the session when that cannot be done for sure."""
        node, self._node, self._held = self._node, None, False
        self._lost = None
        client = self._client
        if node is None or client is None:
            return
        if node.endswith(LOCK_NAME) or client.state != KazooState.CONNECTED:
            # no answer to the create, or no connection: the node's fate is unknown, end the session
            self._drop_session()
            return
        try:
            self._call(time.monotonic() + self.connection_timeout_s, client.delete_async, node)
        except NoNodeError:
            pass
        except Exception:
            self._drop_session()  # could not delete it: ending the session removes the node

    def release(self) -> None:
        with self._guard:
            self._give_up()

    def held_node(self) -> tuple[str, int]:
        """(our lock node's path, the ZooKeeper session that owns it) while we hold the lock: what
        another process checks to tell that we still do."""
        node, session = self._node, self._session_id
        if node is None or not self._held or session is None:
            raise LockAcquisitionError(f"the ZooKeeper lock {self.lock_path} is not held by this process")
        return node, session

    def assert_held(self) -> None:
        node, client, lost = self._node, self._client, self._lost
        if lost is not None:
            raise LockAcquisitionError(f"the ZooKeeper lock {self.lock_path} was lost: {lost}")
        if node is None or not self._held:
            raise LockAcquisitionError(f"the ZooKeeper lock {self.lock_path} is not held by this writer")
        if client is None or client.state != KazooState.CONNECTED:
            raise LockAcquisitionError(
                f"the connection to ZooKeeper at {self.url} is suspended, so the lock {self.lock_path} "
                f"(our node {node}) may be lost"
            )
        try:
            stat = client.exists_async(node).get(timeout=min(self.session_timeout_s, self.connection_timeout_s))
        except Exception as e:  # any failure means we cannot vouch for the lock
            raise LockAcquisitionError(
                f"could not confirm the ZooKeeper lock {self.lock_path} (our node {node}) on {self.url}: "
                f"{_describe(e)}"
            ) from e
        if stat is None or stat.ephemeralOwner != self._session_id:
            raise LockAcquisitionError(
                f"the ZooKeeper lock {self.lock_path} was lost: our node {node} is gone or owned by another session"
            )

    def remove_unused_node(self) -> None:
        """Delete the lock's own znode once nobody holds or waits for it (locks of plans come and go;
        a table's lock node stays)."""
        client = self._client
        if client is None or client.state != KazooState.CONNECTED:
            return
        # best effort: gone already, another executor waits in it, or ZooKeeper is away (a leftover
        # znode costs nothing); a failure here must not hide what the lock guarded
        with contextlib.suppress(Exception):
            client.delete_async(self.lock_path).get(timeout=self.connection_timeout_s)

    def close(self) -> None:
        with self._guard:
            self._give_up()
            self._drop_session()


def _op_deadline(deadline: float) -> float:
    """Even when the wait for the lock is over (or zero), one ZooKeeper call gets a moment to answer."""
    return max(deadline, time.monotonic() + _MIN_CALL_S)


def _hex(session_id: int | None) -> str:
    return f"0x{session_id:x}" if session_id is not None else "?"


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
