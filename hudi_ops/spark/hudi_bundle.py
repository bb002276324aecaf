"""Apache Hudi's Spark bundle: which one hudi-ops runs, where its jar is, and fetching it with Maven.

Every SparkSession, spark-submit, test and the docker image takes its jars from `hudi_jars()`:
`$HUDI_OPS_HUDI_JARS` (comma-separated jars, e.g. a cluster's own Hudi) when set, else the bundle
below in the jar cache (`$HUDI_OPS_JARS_DIR`, by default `.cache/jars` in a source checkout and
`~/.cache/hudi-ops/jars` otherwise), which `python -m hudi_ops.spark.hudi_bundle fetch` fills with
Maven, so every run after the first is offline.

`python -m hudi_ops.spark.hudi_bundle` prints the jars, `... fetch` fetches the bundle first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hudi_ops.errors import ConfigError


@dataclass(frozen=True)
class MavenArtifact:
    group: str
    artifact: str
    version: str

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def jar_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"


#: The Spark line of the bundle; pyspark in pyproject.toml is pinned to a release of it.
SPARK_LINE = "3.5"
HUDI_SPARK_BUNDLE = MavenArtifact("org.apache.hudi", f"hudi-spark{SPARK_LINE}-bundle_2.12", "1.2.0")

JARS_ENV = "HUDI_OPS_HUDI_JARS"
CACHE_ENV = "HUDI_OPS_JARS_DIR"
_CHECKOUT = Path(__file__).resolve().parents[2]


def jars_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    if (_CHECKOUT / "pyproject.toml").is_file():
        return _CHECKOUT / ".cache" / "jars"
    return Path.home() / ".cache" / "hudi-ops" / "jars"


def hudi_jars() -> tuple[str, ...]:
    """The jars that put Apache Hudi on Spark's classpath, as absolute paths."""
    chosen = os.environ.get(JARS_ENV, "").strip()
    if chosen:
        jars = tuple(str(Path(j.strip()).resolve()) for j in chosen.split(",") if j.strip())
        missing = [j for j in jars if not Path(j).is_file()]
        if missing:
            raise ConfigError(f"{JARS_ENV} names jars that do not exist: {', '.join(missing)}; "
                              "point it at the cluster's Hudi Spark bundle, or unset it to use hudi-ops' own")
        return jars
    bundle = jars_dir() / HUDI_SPARK_BUNDLE.jar_name
    if not bundle.is_file():
        raise ConfigError(f"Hudi's Spark bundle {HUDI_SPARK_BUNDLE.coordinates} is not in {bundle.parent}; fetch it "
                          "with `python -m hudi_ops.spark.hudi_bundle fetch` (make does), or set "
                          f"{JARS_ENV} to the jars of a Hudi you already have")
    return (str(bundle.resolve()),)


def fetch(dest: Path | None = None, artifact: MavenArtifact = HUDI_SPARK_BUNDLE) -> Path:
    """Copy the artifact from Maven (its own settings and repositories) into `dest`, unless already there."""
    folder = dest or jars_dir()
    target = folder / artifact.jar_name
    if target.is_file():
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ConfigError(f"fetching {artifact.coordinates} needs Maven (`mvn`) on PATH: install it, or set "
                          f"{JARS_ENV} to jars you already have")
    folder.mkdir(parents=True, exist_ok=True)
    command = [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={artifact.coordinates}",
               f"-DoutputDirectory={folder}"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not target.is_file():
        errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line][:3]
        raise ConfigError(f"`{' '.join(command)}` failed (exit {done.returncode}): "
                          f"{' '.join(errors) or 'no jar arrived'}")
    return target


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["fetch"]:
            fetch()
        elif argv:
            print("usage: python -m hudi_ops.spark.hudi_bundle [fetch]", file=sys.stderr)
            return 2
        print(",".join(hudi_jars()))
        return 0
    except ConfigError as e:
        print(f"hudi_ops.spark.hudi_bundle: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
