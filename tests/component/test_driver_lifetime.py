"""The PySpark driver ends with spark-submit's JVM, even when it is silent in Python (a driver that
writes to its closed stdout dies of the broken pipe anyway; one waiting quietly would not)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

#: a parent that starts a silent "driver" and waits; the driver watches its parent, then sleeps
PARENT = """
import subprocess, sys, time
driver = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(driver.pid, flush=True)
time.sleep(600)
"""
DRIVER = "from hudi_ops.spark.driver_lifetime import end_with_spark_submit; end_with_spark_submit(); " \
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
