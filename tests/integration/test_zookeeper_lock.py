"""ZookeeperBasedLockProvider against a real ZooKeeper server (the session-wide `zookeeper` fixture).

Lock nodes must follow Apache Curator's InterProcessMutex (`_c_<uuid>-lock-<seq>`, ordered by the text after the
last `lock-`) so that Java Hudi writers and hudi-ops exclude each other.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from kazoo.client import KazooClient

from hudi_ops.errors import ConfigError, LockAcquisitionError
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.locks.zookeeper import ZookeeperBasedLockProvider, connect_string, lock_node_sort_key
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
)
from local_platform.ports import free_port

CURATOR_NODE = re.compile(r"^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$")
#: short timeouts for tests; the retry backoff (100-400 ms) keeps reconnects after a restart quick
FAST = {
    "session_timeout_ms": 4000,
    "connection_timeout_ms": 3000,
    "wait_time_ms_between_retry": 100,
    "max_wait_time_ms_between_retry": 400,
}


@pytest.fixture
def lock_spot(request) -> tuple[str, str]:
    """A base path and lock key of this test alone (the server is shared)."""
    return f"/hudi-ops-tests/{request.node.name}-{uuid.uuid4().hex[:8]}", "trips"


@pytest.fixture
def providers(zookeeper, lock_spot) -> Iterator[Callable[..., ZookeeperBasedLockProvider]]:
    made: list[ZookeeperBasedLockProvider] = []

    def make(**overrides: object) -> ZookeeperBasedLockProvider:
        base_path, lock_key = lock_spot
        kwargs = {"url": zookeeper.url, "base_path": base_path, "lock_key": lock_key, **FAST, **overrides}
        provider = ZookeeperBasedLockProvider(**kwargs)  # type: ignore[arg-type]
        made.append(provider)
        return provider

    yield make
    for provider in made:
        provider.close()


@pytest.fixture
def raw(zookeeper) -> Iterator[KazooClient]:
    """A plain kazoo client: looks at the znodes and plays a Java (Curator) writer."""
    client = KazooClient(hosts=zookeeper.url, timeout=4.0)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


@pytest.fixture
def server(zookeeper) -> Iterator[object]:
    """The shared server, for tests that stop it: running again afterwards whatever happened."""
    yield zookeeper
    zookeeper.start()


def lock_znode(lock_spot: tuple[str, str]) -> str:
    return f"{lock_spot[0]}/{lock_spot[1]}"


def wait_children(raw: KazooClient, path: str, count: int, timeout_s: float = 10.0) -> list[str]:
    """Block on a children watch until `path` has `count` children."""
    changed = threading.Event()
    deadline = time.monotonic() + timeout_s
    while True:
        changed.clear()
        children = raw.get_children(path, watch=lambda _e: changed.set())
        if len(children) == count:
            return children
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"{path} has children {children}, expected {count}"
        changed.wait(remaining)


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """For states that offer no event to wait on (a kazoo client's reconnect): check every 20 ms."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Acquirer(threading.Thread):
    """acquire() (or, held, requeue()) on a thread; `done` is set when it returns or raises, `at` is when."""

    def __init__(self, provider: ZookeeperBasedLockProvider, timeout_s: float, *, requeue: bool = False) -> None:
        super().__init__(daemon=True)
        self.provider, self.timeout_s = provider, timeout_s
        self.take = provider.requeue if requeue else provider.acquire
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.at = 0.0
        self.started_at = 0.0

    def run(self) -> None:
        self.started_at = time.monotonic()
        try:
            self.take(self.timeout_s)
        except BaseException as e:
            self.error = e
        finally:
            self.at = time.monotonic()
            self.done.set()

    def result(self, timeout_s: float = 15.0) -> None:
        assert self.done.wait(timeout_s), "acquire() did not return"
        if self.error is not None:
            raise self.error


#: retry pauses of 10 minutes: a waiter that polled instead of watching the node ahead of it would not
#: get the lock within the 20 s each waiter is given
WATCH_ONLY = {"wait_time_ms_between_retry": 600_000, "max_wait_time_ms_between_retry": 600_000}


# -- pure helpers ---------------------------------------------------------------------------------


def test_sort_key_is_curators_text_after_the_last_lock_dash():
    high_uuid = "_c_ffffffff-ffff-ffff-ffff-ffffffffffff-lock-0000000001"
    low_uuid = "_c_00000000-0000-0000-0000-000000000000-lock-0000000002"
    kazoo_recipe = "a1b2c3__lock__0000000000"  # no `lock-`: Curator sorts it by its whole name
    assert sorted([low_uuid, kazoo_recipe, high_uuid], key=lock_node_sort_key) == [high_uuid, low_uuid, kazoo_recipe]
    assert lock_node_sort_key("_c_x-lock-lock-0000000007") == "0000000007"


def test_connect_string_keeps_hudi_java_and_hudi_ops_on_one_server():
    assert connect_string("zk1,zk2:2182,[::1],[::1]:2183/hudi", 2181) == "zk1:2181,zk2:2182,[::1]:2181,[::1]:2183/hudi"
    with pytest.raises(ConfigError, match="Java Hudi writers ignore the port"):
        connect_string("zk1,zk2:2182", 2190)  # Java would connect zk1 on 2181
    assert connect_string("zk1:2181", None) == "zk1:2181"
    assert connect_string("zk1", None) == "zk1"
    with pytest.raises(ConfigError, match="names no host"):
        connect_string(" , ", 2181)


def test_config_keys_carry_hudis_names_and_defaults():
    assert ZK_URL.name == "hoodie.write.lock.zookeeper.url"
    assert ZK_PORT.name == "hoodie.write.lock.zookeeper.port"
    assert ZK_BASE_PATH.name == "hoodie.write.lock.zookeeper.base_path"
    assert ZK_LOCK_KEY.name == "hoodie.write.lock.zookeeper.lock_key"
    assert (ZK_SESSION_TIMEOUT_MS.name, ZK_SESSION_TIMEOUT_MS.default) == (
        "hoodie.write.lock.zookeeper.session_timeout_ms",
        60_000,
    )
    assert (ZK_CONNECTION_TIMEOUT_MS.name, ZK_CONNECTION_TIMEOUT_MS.default) == (
        "hoodie.write.lock.zookeeper.connection_timeout_ms",
        15_000,
    )
    assert (LOCK_RETRY_WAIT_MS.name, LOCK_RETRY_WAIT_MS.default) == (
        "hoodie.write.lock.wait_time_ms_between_retry",
        1000,
    )
    assert (LOCK_RETRY_MAX_WAIT_MS.name, LOCK_RETRY_MAX_WAIT_MS.default) == (
        "hoodie.write.lock.max_wait_time_ms_between_retry",
        16_000,
    )
    assert (LOCK_NUM_RETRIES.name, LOCK_NUM_RETRIES.default) == ("hoodie.write.lock.num_retries", 15)


@pytest.mark.parametrize("base_path", ["hudi/locks", "/hudi/locks/", ""])
def test_a_relative_base_path_is_a_config_error(base_path):
    with pytest.raises(ConfigError, match="base_path"):
        ZookeeperBasedLockProvider(url="127.0.0.1:1", base_path=base_path, lock_key="t")


@pytest.mark.timeout(10)  # it gives up after its connection timeout (0.5 s), not kazoo's default (15 s)
def test_no_server_is_a_lock_error_naming_the_url_and_the_timeout():
    url = f"127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(LockAcquisitionError, match=re.escape(f"could not connect to ZooKeeper at {url} within 0.5s")):
        ZookeeperBasedLockProvider(url=url, base_path="/hudi", lock_key="t", connection_timeout_ms=500)


# -- against the server ---------------------------------------------------------------------------


def test_nodes_are_named_like_curators_under_base_path_and_lock_key(providers, raw, lock_spot):
    provider = providers()
    znode = lock_znode(lock_spot)
    assert provider.lock_path == znode
    # every component exists as a persistent znode before anyone locks
    for path in ("/hudi-ops-tests", lock_spot[0], znode):
        stat = raw.exists(path)
        assert stat is not None and stat.ephemeralOwner == 0, path
    assert raw.get_children(znode) == []

    provider.acquire(5)
    provider.assert_held()
    (name,) = raw.get_children(znode)
    assert CURATOR_NODE.match(name), name
    _, stat = raw.get(f"{znode}/{name}")
    assert stat.ephemeralOwner == provider.session_id != 0

    provider.release()
    assert raw.get_children(znode) == []
    with pytest.raises(LockAcquisitionError, match="not held"):
        provider.assert_held()


def test_from_config_reads_hudis_keys(zookeeper, raw, lock_spot):
    config = HoodieConfig(
        {
            "hoodie.write.lock.zookeeper.url": zookeeper.url,
            "hoodie.write.lock.zookeeper.port": "2181",  # ignored, as Java does, since the url names a port
            "hoodie.write.lock.zookeeper.base_path": lock_spot[0],
            "hoodie.write.lock.zookeeper.session_timeout_ms": "4000",
            "hoodie.table.name": "from_table_name",
        }
    )
    provider = ZookeeperBasedLockProvider.from_config(config)
    try:
        assert provider.url == zookeeper.url
        assert provider.lock_path == f"{lock_spot[0]}/from_table_name"
        provider.acquire(5)
        provider.assert_held()
        assert len(raw.get_children(provider.lock_path)) == 1
        provider.release()
        assert raw.get_children(provider.lock_path) == []
    finally:
        provider.close()
    explicit = ZookeeperBasedLockProvider.from_config(
        config.with_values(**{"hoodie.write.lock.zookeeper.lock_key": "explicit"}), table_name="ignored"
    )
    try:
        assert explicit.lock_path == f"{lock_spot[0]}/explicit"
    finally:
        explicit.close()
    with pytest.raises(ConfigError, match=r"hoodie\.write\.lock\.zookeeper\.base_path"):
        ZookeeperBasedLockProvider.from_config(HoodieConfig({"hoodie.write.lock.zookeeper.url": zookeeper.url}))
    without_name = {k: v for k, v in config.values.items() if k != "hoodie.table.name"}
    with pytest.raises(ConfigError, match=r"hoodie\.write\.lock\.zookeeper\.lock_key"):
        ZookeeperBasedLockProvider.from_config(HoodieConfig(without_name))


def test_two_providers_exclude_each_other(providers, raw, lock_spot):
    first, second = providers(), providers()
    znode = lock_znode(lock_spot)
    first.acquire(5)
    (holder,) = raw.get_children(znode)

    started = time.monotonic()
    with pytest.raises(LockAcquisitionError) as caught:
        second.acquire(0.5)
    waited = time.monotonic() - started
    message = str(caught.value)
    assert znode in message and "0.5s" in message and holder in message
    assert waited >= 0.5  # it waited its time out before giving up
    assert raw.get_children(znode) == [holder]  # the loser removed its node
    with pytest.raises(LockAcquisitionError, match="not held"):
        second.assert_held()

    with pytest.raises(LockAcquisitionError, match="already held"):
        first.acquire(0.1)
    first.assert_held()  # a refused re-entry does not drop the lock

    first.release()
    second.acquire(1)
    second.assert_held()
    with pytest.raises(LockAcquisitionError, match="not held"):
        first.assert_held()


def test_waiters_get_the_lock_in_fifo_order_as_soon_as_it_is_released(providers, raw, lock_spot):
    holder, second, third = providers(**WATCH_ONLY), providers(**WATCH_ONLY), providers(**WATCH_ONLY)
    znode = lock_znode(lock_spot)
    holder.acquire(5)
    waiting_second = Acquirer(second, 20)
    waiting_second.start()
    wait_children(raw, znode, 2)
    waiting_third = Acquirer(third, 20)
    waiting_third.start()
    wait_children(raw, znode, 3)
    # the queue as any provider sees it: the holder's node first, then the waiters in their order
    assert [n.rsplit("-", 1)[1] for n in third.queue()] == sorted(n.rsplit("-", 1)[1] for n in raw.get_children(znode))
    assert third.queue()[0] == holder._node.rsplit("/", 1)[1]

    holder.release()
    waiting_second.result()
    second.assert_held()
    assert not waiting_third.done.is_set()  # still queued behind the second
    wait_children(raw, znode, 2)  # the holder's node is gone, the third still waits

    second.release()
    waiting_third.result()
    third.assert_held()


def test_a_holder_that_requeues_lets_those_waiting_through_and_holds_again_before_later_comers(
        providers, raw, lock_spot):
    """How the demo and the tests let jobs' batch fences through and hold their writers back."""
    holder, early, late = providers(**WATCH_ONLY), providers(**WATCH_ONLY), providers(**WATCH_ONLY)
    znode = lock_znode(lock_spot)
    holder.acquire(5)
    waiting_early = Acquirer(early, 20)
    waiting_early.start()
    wait_children(raw, znode, 2)
    again = Acquirer(holder, 20, requeue=True)
    again.start()
    waiting_early.result()  # the holder's first node gone, its new one behind the early waiter
    early.assert_held()
    wait_children(raw, znode, 2)
    waiting_late = Acquirer(late, 20)
    waiting_late.start()
    wait_children(raw, znode, 3)

    early.release()
    again.result()
    holder.assert_held()
    assert not waiting_late.done.is_set()  # it came after the requeue: it waits behind the holder
    holder.release()
    waiting_late.result()
    late.assert_held()
    with pytest.raises(LockAcquisitionError, match="not held"):
        holder.requeue(1)


def test_lined_up_jobs_pass_their_fences_together_and_their_writers_wait_behind_the_held_lock(
        zookeeper, providers, raw, lock_spot):
    """What the demo and the conflict tests rely on for writes that overlap for certain."""
    base_path, lock_key = lock_spot
    znode = lock_znode(lock_spot)
    options = {ZK_URL.name: zookeeper.url, ZK_BASE_PATH.name: base_path, ZK_LOCK_KEY.name: lock_key}
    writers: list[str] = []

    def job(fence: ZookeeperBasedLockProvider) -> None:
        fence.acquire(20)  # its batch fence's wait for a commit under way, from Python
        fence.release()
        # then its Spark work, then Hudi's writer waits to start (Curator's node, with Hudi 1.1's data: its host)
        writers.append(raw.create(f"{znode}/_c_{uuid.uuid4()}-lock-", b"127.0.0.1", ephemeral=True,
                                  sequence=True).rsplit("/", 1)[1])

    with HeldLock(options, lock_key, wait_s=5) as held:
        jobs = [threading.Thread(target=job, args=(providers(**WATCH_ONLY),), daemon=True) for _ in range(2)]
        for j in jobs:
            j.start()
        held.line_up_writers(2, timeout_s=30)
        # a node is in ZooKeeper's queue before its create() returns to the job that made it
        for j in jobs:
            j.join(10)
        holder, *waiting = held.provider.queue()
        assert held.provider.held_node()[0].endswith(holder) and sorted(waiting) == sorted(writers)


def test_a_java_writers_curator_node_blocks_us_until_deleted(providers, raw, lock_spot):
    provider = providers(**WATCH_ONLY)  # creates the persistent path, like Hudi's provider does
    znode = lock_znode(lock_spot)
    # a Curator InterProcessMutex node; its uuid sorts after any of ours by full name, so only the
    # sequence number puts it first: sorting by the whole name would wrongly let us in
    foreign = raw.create(
        f"{znode}/_c_ffffffff-ffff-ffff-ffff-ffffffffffff-lock-", b"", ephemeral=True, sequence=True
    )
    with pytest.raises(LockAcquisitionError) as caught:
        provider.acquire(0.5)
    assert foreign in str(caught.value)

    waiting = Acquirer(provider, 20)
    waiting.start()
    ours = next(c for c in wait_children(raw, znode, 2) if f"{znode}/{c}" != foreign)
    assert ours < foreign.rsplit("/", 1)[1]  # by full name ours comes first; by sequence it does not
    assert not waiting.done.wait(0.3)  # a wrong implementation would take the lock here

    raw.delete(foreign)
    waiting.result()  # woken by its watch on the foreign node
    provider.assert_held()

    # and a Java writer arriving now queues behind us: our node sorts first by Curator's rule
    late = raw.create(f"{znode}/_c_00000000-0000-0000-0000-000000000000-lock-", b"", ephemeral=True, sequence=True)
    children = sorted(raw.get_children(znode), key=lock_node_sort_key)
    assert children == [ours, late.rsplit("/", 1)[1]]
    raw.delete(late)


WORKER = textwrap.dedent(
    """
    import os, sys
    from hudi_ops.locks.zookeeper import ZookeeperBasedLockProvider

    url, base_path, folder, rounds, name = sys.argv[1:6]
    provider = ZookeeperBasedLockProvider(
        url=url, base_path=base_path, lock_key="trips", session_timeout_ms=4000,
        wait_time_ms_between_retry=100, max_wait_time_ms_between_retry=400,
    )
    print("ready", flush=True)
    sys.stdin.readline()  # go
    marker, counter, log = (os.path.join(folder, n) for n in ("inside", "counter", "log"))
    for i in range(int(rounds)):
        provider.acquire(60)
        provider.assert_held()
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            print(f"OVERLAP {name} {i}", flush=True)
            sys.exit(3)
        with open(counter) as f:
            value = int(f.read())
        os.sched_yield()
        with open(counter, "w") as f:
            f.write(str(value + 1))
        with open(log, "a") as f:
            f.write(f"{name} {i}\\n")
        os.close(fd)
        os.unlink(marker)
        provider.release()
    provider.close()
    print("done", flush=True)
    """
)


def test_processes_exclude_each_other(zookeeper, lock_spot, tmp_path):
    workers, rounds = 4, 15
    (tmp_path / "counter").write_text("0")
    (tmp_path / "log").write_text("")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, zookeeper.url, lock_spot[0], str(tmp_path), str(rounds), f"w{n}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(workers)
    ]
    try:
        for p in procs:  # all connected before anyone starts: maximal contention
            assert p.stdout is not None and p.stdout.readline().strip() == "ready", p.stderr and p.stderr.read()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outputs = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0 and out.strip() == "done", (p.returncode, out, err[-2000:])
    assert int((tmp_path / "counter").read_text()) == workers * rounds  # no lost read-modify-write
    lines = (tmp_path / "log").read_text().splitlines()
    assert sorted(lines) == sorted(f"w{n} {i}" for n in range(workers) for i in range(rounds))


def test_expired_session_loses_the_lock(zookeeper, providers, raw, lock_spot):
    holder, other = providers(), providers()
    holder.acquire(5)
    lost_session = holder.session_id
    assert lost_session is not None
    # expire the holder's session the way ZooKeeper's own tests do: a second client takes the session
    # over (the server drops the holder's connection) and closes it; the ephemeral node goes with it
    hijack = KazooClient(hosts=zookeeper.url, timeout=4.0, client_id=holder._client.client_id)
    hijack.start(timeout=10)
    hijack.stop()
    hijack.close()

    other.acquire(10)  # the holder's node is gone
    with pytest.raises(LockAcquisitionError, match=r"lost|suspended"):
        holder.assert_held()
    # kazoo reconnects with a NEW session: the lock must stay lost
    wait_until(lambda: holder.session_id not in (None, lost_session), 10, "a new session of the old holder")
    with pytest.raises(LockAcquisitionError, match=f"was lost: the ZooKeeper session 0x{lost_session:x} ended"):
        holder.assert_held()
    other.assert_held()
    holder.release()  # tolerates its node being gone, touches nothing else
    other.assert_held()
    other.release()
    holder.acquire(5)  # usable again
    holder.assert_held()


def test_node_deleted_behind_our_back_is_a_lost_lock(providers, raw, lock_spot):
    provider = providers()
    provider.acquire(5)
    (name,) = raw.get_children(lock_znode(lock_spot))
    raw.delete(f"{lock_znode(lock_spot)}/{name}")
    with pytest.raises(LockAcquisitionError, match="gone"):
        provider.assert_held()
    provider.release()  # the node is gone already: no error


def test_server_down_while_holding_refuses_and_recovers_with_the_session(server, providers):
    # a session long enough to outlive a slow JVM restart on a loaded machine, and retries that outlast it
    provider = providers(session_timeout_ms=20_000, num_retries=100)
    provider.acquire(5)
    session = provider.session_id
    server.stop()
    with pytest.raises(LockAcquisitionError, match=r"suspended|could not confirm"):
        provider.assert_held()
    server.start()
    # within the session timeout the same session comes back, and with it the lock
    wait_until(lambda: provider._client is not None and provider._client.connected, 30, "the reconnect")
    assert provider.session_id == session
    provider.assert_held()


def test_server_down_while_waiting_fails_the_acquire_in_time(server, providers, raw, lock_spot):
    holder, waiter = providers(), providers()
    holder.acquire(5)
    waiting = Acquirer(waiter, 3)
    waiting.start()
    wait_children(raw, lock_znode(lock_spot), 2)
    server.stop()
    with pytest.raises(LockAcquisitionError) as caught:
        waiting.result(timeout_s=15)
    assert lock_znode(lock_spot) in str(caught.value)
    assert waiting.at - waiting.started_at >= 3  # it waited out its time, then failed (result() bounds it above)

    server.start()
    holder.close()  # its session (and node) ends, as does the abandoned one of the waiter
    fresh = providers()
    fresh.acquire(15)  # may wait for the waiter's old session to expire (4 s)
    fresh.assert_held()
