"""The Python that runs the jobs' drivers in client mode, which need not be Airflow's.

Airflow's side of hudi-ops imports no PySpark; the jobs need PySpark 3.5, the line of Hudi's Spark
bundle, and the Spark provider's 6.x line brings `pyspark-client` (Spark 4) into Airflow's environment.
So a worker may name another interpreter for the jobs (the Spark connection's `pyspark-python` extra,
else `$PYSPARK_PYTHON`, else Airflow's own): its spark-submit starts them, it runs the driver, and the
operator's package travels to it as a zip, as in cluster mode, so it needs only JOBS_REQUIREMENTS.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from hudi_ops.errors import ConfigError

#: the Spark connection's extra that names the jobs' interpreter
CONNECTION_EXTRA = "pyspark-python"
#: what a jobs-only interpreter needs (the `jobs` extra is the first; pyproject.toml's ranges match)
JOBS_REQUIREMENTS = ("pyspark>=3.5.2,<3.6", "pyarrow>=16", "fastavro>=1.9", "kazoo>=2.9")
SPARK_LINE = "3.5."

# what an interpreter can import, and where its Spark is: run here for this interpreter, else by it in a clean
# environment, printing `seen`
_PROBE = """
import importlib, os
seen = {}
for name in ("pyspark", "pyarrow", "fastavro", "kazoo"):
    try:
        module = importlib.import_module(name)
    except Exception:  # missing, or broken (pyspark-client and pyspark in one folder): not usable either way
        continue
    seen[name] = {"version": getattr(module, "__version__", ""), "folder": os.path.dirname(module.__file__)}
"""


@dataclass(frozen=True)
class JobsPython:
    python: str
    pyspark_version: str
    spark_home: str  # $SPARK_HOME, else its pip-installed pyspark's folder

    @property
    def is_this_interpreter(self) -> bool:
        return _is_this(self.python)

    def env(self) -> dict[str, str]:
        """spark-submit's environment: its bin folder first (pip's spark-submit finds Spark through the
        `python3` on PATH) and it as the driver's and the workers' Python."""
        return {"PATH": os.pathsep.join([str(Path(self.python).parent), os.environ.get("PATH", "")]),
                "PYSPARK_PYTHON": self.python, "PYSPARK_DRIVER_PYTHON": self.python}


def named_jobs_python(connection_extra: str | None = None) -> str:
    """The interpreter a client-mode job runs with: the connection's, else $PYSPARK_PYTHON, else this one; a
    bare name (`python3`) as PATH finds it, the way spark-submit would."""
    named = connection_extra or os.environ.get("PYSPARK_PYTHON") or sys.executable
    return named if os.sep in named else shutil.which(named) or named


@cache
def jobs_python(python: str) -> JobsPython:
    """`python`, checked: it runs, imports PySpark 3.5 and what the jobs import; else ConfigError naming
    what is missing and the pip command that adds it."""
    fix = (f"install the jobs' side into it (`{python} -m pip install " + " ".join(f"'{r}'" for r in JOBS_REQUIREMENTS)
           + f"`), or name another interpreter with the Spark connection's `{CONNECTION_EXTRA}` extra or "
           "$PYSPARK_PYTHON")
    seen = _probe(python)
    if isinstance(seen, str):
        raise ConfigError(f"the jobs' interpreter {python} {seen}: {fix}")
    missing = [name for name in ("pyspark", "pyarrow", "fastavro", "kazoo") if name not in seen]
    if missing:
        raise ConfigError(f"the jobs' interpreter {python} cannot import {', '.join(missing)}: {fix}")
    version = seen["pyspark"]["version"]
    if not version.startswith(SPARK_LINE):
        raise ConfigError(f"the jobs' interpreter {python} has PySpark {version}; Hudi's bundle is built for Spark "
                          f"3.5, so the jobs need PySpark 3.5: {fix}")
    return JobsPython(python, version, os.path.abspath(os.environ.get("SPARK_HOME") or seen["pyspark"]["folder"]))


def _probe(python: str) -> dict[str, dict[str, str]] | str:
    """What `python` imports (_PROBE's `seen`), or why it could not tell."""
    if _is_this(python):
        namespace: dict[str, dict[str, dict[str, str]]] = {}
        exec(_PROBE, namespace)  # our own constant, as the other interpreter runs it
        return namespace["seen"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        done = subprocess.run([python, "-c", _PROBE + "import json; print(json.dumps(seen))"], capture_output=True,
                              text=True, env=env, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        return f"does not run ({e})"
    if done.returncode != 0:
        return f"failed ({done.stderr.strip()[-300:]})"
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return f"printed no answer ({done.stdout.strip()[-300:]!r})"


def _is_this(python: str) -> bool:
    # by path, symlinks kept: every venv's python links to the same base interpreter, with other packages
    return os.path.abspath(python) == os.path.abspath(sys.executable)
