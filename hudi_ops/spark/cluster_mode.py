"""What travels with a job whose driver runs on the cluster (`--deploy-mode cluster` on YARN or Kubernetes).

Such a driver sees nothing of the Airflow worker's: not its files, its interpreter, nor its
site-packages. So, the way Spark documents for Python applications:
- the job's options go as a file Spark ships into the driver's working directory (`--files`), named
  `PROPS_NAME`, and the job reads it from there (`--props PROPS_NAME`): never on a command line;
- hudi-ops itself goes as a zip on the driver's Python path (`--py-files`), built from the installed
  package; its compiled dependencies (pyarrow, fastavro, kazoo) are the cluster Python's, or a packed
  environment's shipped with `--archives` (README, "Running on your cluster");
- the job's final line is written to the table's storage (`RESULTS_FOLDER`, a hidden folder of the
  base path that Hudi's listings and readers skip), where the task reads it back and removes it;
- one attempt (`spark.yarn.maxAppAttempts=1`; a driver pod is never restarted): Airflow's retries decide
  what runs again, as in client mode; a tag names the task's drivers (a YARN tag, a Kubernetes label,
  `TAG_LABEL`), so that its `on_kill` ends them, and a retry finds one an earlier try left running (a worker
  lost with its task): it follows it and takes its result (hudi_ops.airflow.operators.resumable, Airflow 3.3) or ends
  it (what hudi_ops.spark.driver_lifetime does in client mode);
- on YARN, spark-submit returns once YARN accepts the job and the task follows the application through
  the ResourceManager's REST API, unless yarn-site.xml names none or the job's conf says
  `spark.yarn.submit.waitAppCompletion=true`; on Kubernetes spark-submit waits for the driver's end (the
  Spark provider takes the job's exit code from its log).
hudi-ops' driver JVM options (hudi_ops.spark.driver_jvm) are the worker's and stay out.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import hudi_ops
from hudi_ops.errors import ConfigError

PROPS_NAME = "hudi-ops-job.properties"
RESULTS_FOLDER = ".hudi-ops/results"
PACKAGE_ZIP = "hudi_ops.zip"
#: whether spark-submit waits for a YARN application's end
WAIT_APP_COMPLETION = "spark.yarn.submit.waitAppCompletion"
#: YARN keeps tags in lower case
TAG_PREFIX = "hudi-ops-"
#: the label carrying the tag on a task's Kubernetes driver pods (hudi_ops.spark.kubernetes_pods finds them by it)
TAG_LABEL = "hudi-ops/task"
#: where Spark uploads, in Kubernetes cluster mode, the files a job ships from this worker (its driver pod fetches them)
UPLOAD_PATH = "spark.kubernetes.file.upload.path"
#: a Kubernetes label value: at most 63 characters, alphanumeric at both ends
_LABEL_VALUE = re.compile(r"(?=.{1,63}$)[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


@dataclass(frozen=True)
class Deployment:
    """Where spark-submit sends a job: the master URL and the deploy mode (None: Spark's default, client)."""

    master: str
    deploy_mode: str | None = None

    @property
    def is_cluster(self) -> bool:
        return (self.deploy_mode or "client").strip().lower() == "cluster"

    @property
    def is_yarn(self) -> bool:
        return self.master.strip().lower().startswith("yarn")

    @property
    def is_kubernetes(self) -> bool:
        return self.master.strip().lower().startswith("k8s://")


def package_zip(folder: Path) -> Path:
    """hudi-ops' Python modules as the zip `--py-files` puts on the driver's path (built in milliseconds,
    so always from the package this task runs)."""
    package = Path(hudi_ops.__file__).parent
    target = folder / PACKAGE_ZIP
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for module in sorted(package.rglob("*.py")):
            zf.write(module, Path("hudi_ops") / module.relative_to(package))
    return target


def result_uri(base_path: str) -> str:
    """A new result file's URI on the table's storage, for one run of one job (named without a look at
    the store: an S3 table's region is the driver's to find)."""
    base = base_path.rstrip("/") if "://" in base_path else os.path.abspath(base_path)
    return f"{base}/{RESULTS_FOLDER}/{uuid.uuid4().hex}.json"


def application_tag(*identity: object) -> str:
    """The tag of the YARN applications of one task (its DAG, task, run and map index): the same for each
    of its tries, so a try finds and ends what an earlier one left running."""
    digest = hashlib.sha256("\x1f".join(map(str, identity)).encode()).hexdigest()[:24]
    return f"{TAG_PREFIX}{digest}"


def cluster_conf(deployment: Deployment, tag: str, conf: Mapping[str, str], *, tracked: bool = False,
                 ) -> dict[str, str]:
    """hudi-ops' settings for a cluster-mode job under `conf` (the job's and the table's win). `tracked`: the
    task follows the YARN application through the ResourceManager's REST API, so spark-submit ends as soon
    as YARN has accepted it; otherwise spark-submit waits for the application's end."""
    if deployment.is_kubernetes:
        return _kubernetes_conf(tag, conf)
    if not deployment.is_yarn:
        return dict(conf)
    tags = ",".join(t for t in (tag, conf.get("spark.yarn.tags", "")) if t)  # theirs beside ours
    return {"spark.yarn.maxAppAttempts": "1", **conf, "spark.yarn.tags": tags,
            WAIT_APP_COMPLETION: "false" if tracked else "true"}


def _kubernetes_conf(tag: str, conf: Mapping[str, str]) -> dict[str, str]:
    """The driver pod labelled with the task's tag, and spark-submit waiting for its end: the Spark provider reads
    the driver's exit code from what spark-submit logs while it waits, and fails a submit that logged none."""
    if not _LABEL_VALUE.fullmatch(tag):
        raise ConfigError(f"the tag {tag!r} is no Kubernetes label value (at most 63 characters, alphanumeric at "
                          "both ends, '-', '_' or '.' between)")
    if not conf.get(UPLOAD_PATH):
        raise ConfigError(
            f"cluster mode on Kubernetes needs {UPLOAD_PATH}: Spark uploads there the files hudi-ops ships from "
            "this worker (the job's options file, its package, the jars) for the driver pod to fetch, and leaves "
            "them there. Set it to a folder this worker can write and the pods can read, and no one else (the "
            "options file may hold secrets), e.g. s3a://bucket/spark-uploads, in the operator's `conf` (a table's "
            "`spark_conf` in the tables config)")
    return {**conf, f"spark.kubernetes.driver.label.{TAG_LABEL}": tag,
            "spark.kubernetes.submission.waitAppCompletion": "true"}
