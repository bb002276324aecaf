"""The PySpark driver ends with spark-submit's JVM, and with the Airflow task process that started
spark-submit, even when it is silent in Python (a driver that writes to its closed stdout dies of the
broken pipe anyway; one waiting quietly would not)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import psutil

from hudi_ops.spark.driver_lifetime import TASK_PROCESS_ENV

#: a parent that starts a silent "driver" and waits; the driver watches its parent, then sleeps
PARENT = """
import subprocess, sys, time
driver = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(driver.pid, flush=True)
time.sleep(600)
"""
DRIVER = "from hudi_ops.spark.driver_lifetime import end_with_spark_submit_and_task as end; end(); " \
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
