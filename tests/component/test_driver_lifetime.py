"""The PySpark driver ends with spark-submit's JVM, and with the Airflow task process that started
spark-submit, even when it is silent in Python (a driver that writes to its closed stdout dies of the
broken pipe anyway; one waiting quietly would not)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import psutil
import pytest

from hudi_ops.errors import EXIT_FAILED
from hudi_ops.job_specs.results import RESULT_FILE_ENV
from hudi_ops.spark.driver_lifetime import GRACE_S, TASK_PROCESS_ENV

#: a parent that starts a silent "driver" and waits; the driver watches its parent, then sleeps
PARENT = """
import subprocess, sys, time
driver = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(driver.pid, flush=True)
time.sleep(600)
"""
DRIVER = "from hudi_ops.spark.driver_lifetime import end_with_spark_submit_and_task as end; end(lambda: None); " \
         "import time; time.sleep(600)"


def silent_driver(env: dict[str, str]) -> tuple[subprocess.Popen[str], psutil.Process]:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, DRIVER], stdout=subprocess.PIPE, text=True, env=env)
    assert parent.stdout is not None
    driver = psutil.Process(int(parent.stdout.readline()))
    parent.stdout.close()
    return parent, driver


def ended(driver: psutil.Process, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if driver.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def test_a_silent_driver_started_by_spark_submit_exits_once_its_jvm_is_killed():
    parent, driver = silent_driver({**os.environ, "PYSPARK_GATEWAY_PORT": "1"})  # as PythonRunner sets it
    try:
        assert not ended(driver, 1.0)  # it waits while its parent lives
        parent.kill()
        parent.wait()
        assert ended(driver, 5.0), "the driver outlived its spark-submit"
    finally:
        parent.kill()
        parent.wait()
        if driver.is_running():
            driver.kill()


def test_a_job_run_without_spark_submit_does_not_watch_its_parent():
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_GATEWAY_PORT"}
    parent, driver = silent_driver(env)
    try:
        parent.kill()
        parent.wait()
        assert not ended(driver, 2.0)  # `python -m hudi_ops.spark` belongs to whoever started it
    finally:
        parent.kill()
        parent.wait()
        driver.kill()
        driver.wait(10)


#: an Airflow task process: it names itself to the driver as the operator does, then waits
TASK = "from hudi_ops.spark.driver_lifetime import task_process; print(task_process(), flush=True); " \
       "import time; time.sleep(600)"


def test_a_driver_beside_its_task_exits_once_the_task_process_dies_while_spark_submit_lives_on():
    """A task process killed hard leaves spark-submit (here: the driver's parent) running; Airflow's
    retry must not find the orphan's driver still at work beside it."""
    task = subprocess.Popen([sys.executable, "-c", TASK], stdout=subprocess.PIPE, text=True)
    assert task.stdout is not None
    named = task.stdout.readline().strip()
    task.stdout.close()
    host, pid, started = named.split(":")
    assert int(pid) == task.pid and started and host  # its start time: a pid reused later is not the task
    parent, driver = silent_driver({**os.environ, "PYSPARK_GATEWAY_PORT": "1", TASK_PROCESS_ENV: named})
    try:
        assert not ended(driver, 1.0)
        task.kill()
        task.wait()
        assert ended(driver, 5.0), "the driver outlived its Airflow task"
        assert parent.poll() is None  # spark-submit's own end follows its driver's (PythonRunner waits for it)
    finally:
        for process in (task, parent):
            process.kill()
            process.wait()
        if driver.is_running():
            driver.kill()


def test_a_task_process_named_by_a_reused_pid_is_gone():
    """The pid of a dead task may belong to another process later: its start time tells them apart."""
    parent, driver = silent_driver({**os.environ, TASK_PROCESS_ENV: f"{socket.gethostname()}:{os.getpid()}:1"})
    try:
        assert ended(driver, 5.0)
    finally:
        parent.kill()
        parent.wait()


def test_a_task_process_on_another_host_is_left_to_the_fence():
    """In cluster mode the driver runs on a cluster node, where the task's pid means nothing."""
    parent, driver = silent_driver({**os.environ, TASK_PROCESS_ENV: f"elsewhere-{socket.gethostname()}:1:1"})
    try:
        assert not ended(driver, 2.0)
    finally:
        parent.kill()
        parent.wait()
        driver.kill()
        driver.wait(10)


def test_a_dead_task_process_its_parent_has_not_reaped_is_gone():
    task = subprocess.Popen([sys.executable, "-c", "pass"])  # never waited for: a zombie once it exits
    time.sleep(1.0)
    named = f"{socket.gethostname()}:{task.pid}:{_start_time_of(task.pid)}"
    parent, driver = silent_driver({**os.environ, TASK_PROCESS_ENV: named})
    try:
        assert ended(driver, 5.0), "a zombie task kept the driver alive"
    finally:
        task.wait()
        parent.kill()
        parent.wait()


def _start_time_of(pid: int) -> str:
    """Field 22 of /proc/<pid>/stat, read here whatever the process's state (the test's own parse)."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[19]


def _task() -> tuple[subprocess.Popen[str], str]:
    """An Airflow task process as the operator names it to its job."""
    task = subprocess.Popen([sys.executable, "-c", TASK], stdout=subprocess.PIPE, text=True)
    assert task.stdout is not None
    named = task.stdout.readline().strip()
    task.stdout.close()
    return task, named


def _free_port() -> int:
    """A loopback port nothing listens on: a broker that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_kafka_ingest_waiting_for_a_broker_that_is_down_ends_with_its_task_saying_so(tmp_path):
    """librdkafka's calls hold back Python's signals until they return; the offsets lookup asks in short
    calls, so the job unwinds as its task dies rather than when the broker's 30 s are up (a chaos run found
    an orphaned attempt stopped dead at the grace's end, exit 1 and no result, while the broker restarted)."""
    task, named = _task()
    result = tmp_path / "result.json"
    job = subprocess.Popen(
        [sys.executable, "-m", "hudi_ops.spark", "ingest", "--target-base-path", str(tmp_path / "trips"),
         "--target-table", "trips", "--record-key-field", "id", "--source-ordering-field", "ts",
         "--source-kind", "kafka", "--kafka-topic", "trips",
         "--hoodie-conf", f"kafka.bootstrap.servers=127.0.0.1:{_free_port()}"],
        env={**os.environ, TASK_PROCESS_ENV: named, RESULT_FILE_ENV: str(result)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3.0)  # in the offsets lookup, which waits for the broker
        assert job.poll() is None
        task.kill()
        task.wait()
        _, log = job.communicate(timeout=GRACE_S + 30)
        assert job.returncode == EXIT_FAILED
        outcome = json.loads(result.read_text())
        assert outcome["error"] == "JobEndedError", outcome
        # the main thread unwound and said why itself: the watcher's last word would not print this
        assert "hudi_ops.spark: error: spark-submit or the Airflow task that started it is gone" in log, log
        assert "Traceback" not in log
    finally:
        for process in (task, job):
            process.kill()
            process.wait()


#: a driver whose main thread is in a call no signal reaches (librdkafka's, for its whole timeout): its
#: watcher gives the job's last word, then ends it
STUCK = """
import json, os, sys
from confluent_kafka import Consumer
from hudi_ops.spark.driver_lifetime import end_with_spark_submit_and_task
def last_word():
    if sys.argv[3] == "broken":  # its stdout a pipe whose reader is gone, as spark-submit's JVM once it died
        raise BrokenPipeError(32, "Broken pipe")
    open(sys.argv[1], "w").write(json.dumps({"error": "JobEndedError"}))
end_with_spark_submit_and_task(last_word)
Consumer({"bootstrap.servers": sys.argv[2], "group.id": "stuck"}).list_topics("t", timeout=120)
print("unwound", flush=True)
"""


@pytest.mark.parametrize("word", ["reported", "broken"])
def test_a_driver_stuck_past_the_grace_ends_with_its_last_word_reported(tmp_path, word):
    """Its last word said, or failing (the JVM whose pipe it writes to is gone): the job ends either way."""
    task, named = _task()
    result = tmp_path / "result.json"
    driver = subprocess.Popen([sys.executable, "-c", STUCK, str(result), f"127.0.0.1:{_free_port()}", word],
                              env={**os.environ, TASK_PROCESS_ENV: named}, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        time.sleep(1.0)
        task.kill()
        task.wait()
        out, _ = driver.communicate(timeout=GRACE_S + 30)  # well before the call's 120 s
        assert driver.returncode == EXIT_FAILED and "unwound" not in out
        if word == "reported":
            assert json.loads(result.read_text()) == {"error": "JobEndedError"}
        else:
            assert not result.exists()
    finally:
        for process in (task, driver):
            process.kill()
            process.wait()
