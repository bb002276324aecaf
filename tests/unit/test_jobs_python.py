"""The jobs' interpreter in client mode: checked before spark-submit, refused with what is missing and the
command that adds it (hudi_ops.spark.jobs_python)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hudi_ops.errors import ConfigError
from hudi_ops.spark.jobs_python import JOBS_REQUIREMENTS, jobs_python, named_jobs_python

REPO = Path(__file__).resolve().parents[2]


def _venv(root: Path, packages: dict[str, str]) -> str:
    """A venv (no pip) whose site-packages hold `packages`: name -> __version__."""
    subprocess.run([os.path.realpath(getattr(sys, "_base_executable", sys.executable)), "-m", "venv",
                    "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    for name, version in packages.items():
        Path(site, name).mkdir()
        Path(site, name, "__init__.py").write_text(f"__version__ = {version!r}\n")
    return str(python)


def test_pyprojects_ranges_are_what_a_jobs_interpreter_is_told_to_install():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {*project["dependencies"], *project["optional-dependencies"]["jobs"]}
    assert set(JOBS_REQUIREMENTS) <= declared
    assert not any(d.startswith("pyspark") for d in project["dependencies"])  # Airflow's side needs none


def test_this_checkouts_interpreter_runs_the_jobs_with_its_pyspark():
    jobs = jobs_python(sys.executable)
    assert jobs.is_this_interpreter and jobs.pyspark_version.startswith("3.5.")
    assert (Path(jobs.spark_home) / "jars").is_dir()
    assert jobs.env()["PYSPARK_PYTHON"] == jobs.env()["PYSPARK_DRIVER_PYTHON"] == sys.executable
    assert jobs.env()["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)  # its spark-submit first


def test_an_interpreter_without_the_jobs_imports_is_refused_naming_them_and_the_pip_command(tmp_path):
    python = _venv(tmp_path / "venv", {"pyarrow": "16.0.0"})
    with pytest.raises(ConfigError) as refused:
        jobs_python(python)
    message = str(refused.value)
    assert f"the jobs' interpreter {python} cannot import pyspark, fastavro, kazoo" in message
    assert f"{python} -m pip install 'pyspark>=3.5.2,<3.6'" in message and "`pyspark-python` extra" in message


def test_pyspark_4_is_refused_for_the_jobs(tmp_path):
    python = _venv(tmp_path / "venv", {"pyspark": "4.0.1", "pyarrow": "21.0.0", "fastavro": "1.12.0",
                                       "kazoo": "2.11.0"})
    with pytest.raises(ConfigError, match=r"has PySpark 4\.0\.1; Hudi's bundle is built for Spark 3\.5"):
        jobs_python(python)


def test_an_interpreter_that_does_not_run_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="does not run"):
        jobs_python(str(tmp_path / "no-python"))


def test_the_connection_names_the_interpreter_before_the_environment(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/jobs/bin/python")
    assert named_jobs_python("/srv/jobs/bin/python") == "/srv/jobs/bin/python"
    assert named_jobs_python(None) == "/opt/jobs/bin/python"
    monkeypatch.delenv("PYSPARK_PYTHON")
    assert named_jobs_python(None) == sys.executable
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # a bare name, as images often set it
    assert named_jobs_python(Path(sys.executable).name) == sys.executable
