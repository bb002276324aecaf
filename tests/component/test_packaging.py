"""What ships: hudi-ops' wheel and the zip cluster mode puts on every driver hold the product's package alone,
never the development side (local_platform: `make up`, the demo, the tests' servers; tests; bench)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hudi_ops.spark.cluster_mode import package_zip

pytestmark = pytest.mark.component

REPO = Path(__file__).resolve().parents[2]
DEVELOPMENT = ("local_platform/", "tests/", "bench/", "dags/")
#: the product's modules, as the checkout holds them
PRODUCT = {str(p.relative_to(REPO)) for p in (REPO / "hudi_ops").rglob("*.py")}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> list[str]:
    """The names in the wheel built from the checkout's files (those git tracks or would), as an sdist holds them."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    for name in subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                               check=True, capture_output=True, text=True).stdout.split("\0"):
        if name and (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((REPO / name).read_bytes())
    uv = str(Path(sys.executable).parent / "uv")
    env = {**os.environ, "UV_CACHE_DIR": str(REPO / ".cache" / "uv")}  # later runs offline
    subprocess.run([uv, "build", "-q", "--wheel", "--out-dir", str(root / "dist"), str(source)], check=True, env=env)
    with zipfile.ZipFile(next((root / "dist").glob("hudi_ops-*.whl"))) as built:
        return built.namelist()


def test_the_wheel_holds_the_product_and_no_development_module(wheel):
    assert [n for n in wheel if n.startswith(DEVELOPMENT)] == []
    assert {n for n in wheel if n.endswith(".py")} == PRODUCT  # the package's modules, and nothing else
    assert {n.split("/")[0] for n in wheel} == {"hudi_ops", "hudi_ops-0.1.0.dist-info"}
    # what the product runs from the wheel: the jobs' application, the operators, hudi-ops' Java sources
    assert {"hudi_ops/spark/__main__.py", "hudi_ops/airflow/operators/spark_jobs.py", "hudi_ops/jars.py"} <= set(wheel)
    assert any(n.startswith("hudi_ops/spark/java/") and n.endswith(".java") for n in wheel)


def test_the_zip_cluster_mode_ships_holds_the_package_alone(tmp_path):
    with zipfile.ZipFile(package_zip(tmp_path)) as shipped:
        names = shipped.namelist()
    assert {n.split("/")[0] for n in names} == {"hudi_ops"}
    assert set(names) == PRODUCT
