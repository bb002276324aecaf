"""Jars from Maven: fetched once with the machine's own `mvn` (its settings and repositories, which is
how this project's machines reach Maven Central) into hudi-ops' jar cache; every run after is offline.

The cache is `$HUDI_OPS_JARS_DIR`, else `.cache/jars` in a source checkout, else `~/.cache/hudi-ops/jars`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from hudi_ops.errors import ConfigError

CACHE_ENV = "HUDI_OPS_JARS_DIR"
_CHECKOUT = Path(__file__).resolve().parents[1]
#: written last into a folder of jars, so a fetch cut off half-way is done again, not used
_COMPLETE = ".complete"


@dataclass(frozen=True)
class MavenArtifact:
    group: str
    artifact: str
    version: str
    #: `group:artifact` of transitive dependencies to leave out
    exclusions: tuple[str, ...] = ()

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def jar_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    def pom_dependency(self) -> str:
        excluded = "".join(
            f"<exclusion><groupId>{escape(g)}</groupId><artifactId>{escape(a)}</artifactId></exclusion>"
            for g, a in (e.split(":", 1) for e in self.exclusions)
        )
        return (f"<dependency><groupId>{escape(self.group)}</groupId><artifactId>{escape(self.artifact)}"
                f"</artifactId><version>{escape(self.version)}</version>"
                f"<exclusions>{excluded}</exclusions></dependency>")


def jars_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    if (_CHECKOUT / "pyproject.toml").is_file():
        return _CHECKOUT / ".cache" / "jars"
    return Path.home() / ".cache" / "hudi-ops" / "jars"


def cached_jars(artifacts: tuple[MavenArtifact, ...], what: str, part: str) -> tuple[str, ...]:
    """The artifacts' own jars in the jar cache, as absolute paths; a ConfigError naming the command that
    fetches them (`python -m hudi_ops.jars fetch PART`) when one is missing."""
    jars = tuple(jars_dir() / a.jar_name for a in artifacts)
    missing = [j.name for j in jars if not j.is_file()]
    if missing:
        raise ConfigError(f"{what}'s jars {', '.join(missing)} are not in {jars_dir()}; fetch them with "
                          f"`python -m hudi_ops.jars fetch {part}` (make does)")
    return tuple(str(j.resolve()) for j in jars)


def fetch_jar(artifact: MavenArtifact, folder: Path) -> Path:
    """The artifact's own jar (no dependencies) in `folder`, copied from Maven unless already there."""
    target = folder / artifact.jar_name
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    _run_maven(["dependency:copy", f"-Dartifact={artifact.coordinates}", f"-DoutputDirectory={folder}"],
               artifact.coordinates)
    if not target.is_file():
        raise ConfigError(f"Maven reported {artifact.coordinates} copied, but {target} is not there")
    return target


def fetch_with_dependencies(artifacts: tuple[MavenArtifact, ...], folder: Path) -> Path:
    """`folder` holding the artifacts and their runtime dependencies (a classpath `folder/*`), copied from
    Maven unless a complete copy is already there."""
    if fetched(folder):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    pom = ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
           "<groupId>hudi-ops</groupId><artifactId>jar-fetch</artifactId><version>0</version>"
           f"<packaging>pom</packaging><dependencies>{''.join(a.pom_dependency() for a in artifacts)}"
           "</dependencies></project>")
    with tempfile.TemporaryDirectory(prefix="hudi-ops-maven-") as work:
        pom_path = Path(work) / "pom.xml"
        pom_path.write_text(pom)
        _run_maven(["-f", str(pom_path), "dependency:copy-dependencies", "-DincludeScope=runtime",
                    f"-DoutputDirectory={folder}"], ", ".join(a.coordinates for a in artifacts))
    (folder / _COMPLETE).touch()
    return folder


def fetched(folder: Path) -> bool:
    return (folder / _COMPLETE).is_file()


def _run_maven(goal: list[str], what: str) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ConfigError(f"fetching {what} needs Maven (`mvn`) on PATH: install it (Debian: "
                          "`apt-get install maven`)")
    command = [mvn, "-q", "-B", *goal]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line][:3]
        raise ConfigError(f"`{' '.join(command)}` failed (exit {done.returncode}): "
                          f"{' '.join(errors) or 'see Maven output'}")
