"""The driver JVM's options: the class-data-sharing archive named after what it depends on, used only when built."""

from __future__ import annotations

from hudi_ops.maven import CACHE_ENV
from hudi_ops.spark import driver_jvm
from hudi_ops.spark.hudi_bundle import JARS_ENV
from hudi_ops.spark.launch import spark_submit_command


def _machine(tmp_path, monkeypatch, *, bundle=b"hudi", java="jdk-a"):
    jar = tmp_path / "bundle.jar"
    jar.write_bytes(bundle)
    (tmp_path / java / "bin").mkdir(parents=True, exist_ok=True)
    (tmp_path / java / "bin" / "java").touch()
    monkeypatch.setenv(JARS_ENV, str(jar))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / java))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return driver_jvm.archive_path()


def test_without_an_archive_a_job_gets_the_small_job_flags_alone(tmp_path, monkeypatch):
    archive = _machine(tmp_path, monkeypatch)
    assert archive.parent == tmp_path / "cache" and not archive.exists()
    assert driver_jvm.driver_java_options().split() == list(driver_jvm.SMALL_JOB_FLAGS)


def test_a_built_archive_is_mapped_by_every_submitted_job_beside_the_jobs_own_options(tmp_path, monkeypatch):
    archive = _machine(tmp_path, monkeypatch)
    archive.parent.mkdir()
    archive.write_bytes(b"archive")
    options = f"-XX:SharedArchiveFile={archive} {' '.join(driver_jvm.SMALL_JOB_FLAGS)}"
    assert driver_jvm.driver_java_options() == options
    command = spark_submit_command(["clean", "--base-path", "/t"])
    assert f"{driver_jvm.DRIVER_JAVA_OPTIONS}={options}" in command
    # the job's own options come after ours (Spark's extraJavaOptions): theirs win, ours stay
    own = spark_submit_command(["clean"], conf={"spark.driver.extraJavaOptions": "-XX:+UseParallelGC"})
    assert {f"{driver_jvm.DRIVER_JAVA_OPTIONS}={options}", "spark.driver.extraJavaOptions=-XX:+UseParallelGC"} \
        <= set(own)
    # setting spark.driver.defaultJavaOptions itself replaces them all
    replaced = spark_submit_command(["clean"], conf={driver_jvm.DRIVER_JAVA_OPTIONS: "-Xss4m"})
    assert [c for c in replaced if c.startswith(driver_jvm.DRIVER_JAVA_OPTIONS)] == [
        f"{driver_jvm.DRIVER_JAVA_OPTIONS}=-Xss4m"]


def test_a_machine_where_the_archive_cannot_be_named_runs_jobs_without_it(tmp_path, monkeypatch):
    _machine(tmp_path, monkeypatch)
    monkeypatch.setenv(JARS_ENV, str(tmp_path / "missing.jar"))  # e.g. jars on another machine
    assert driver_jvm.driver_java_options().split() == list(driver_jvm.SMALL_JOB_FLAGS)


def test_another_java_or_other_hudi_jars_name_another_archive(tmp_path, monkeypatch):
    first = _machine(tmp_path, monkeypatch)
    assert _machine(tmp_path, monkeypatch) == first  # stable
    assert _machine(tmp_path, monkeypatch, java="jdk-b") != first
    assert _machine(tmp_path, monkeypatch, bundle=b"another hudi") != first
