"""Dependencies flow one way (DESIGN.md section 3): a module imports only from its own layer or lower ones."""

from __future__ import annotations

import ast
from pathlib import Path

import hudi_ops

PACKAGE = Path(hudi_ops.__file__).parent
# lowest first; modules not listed sit on top (the CLI, the demo)
LAYERS = [
    {"errors", "config", "storage", "s3_settings", "maven"},
    {"job_specs"},  # the contract between Airflow and the Spark jobs
    {"format"},
    # a source's new work is read against the table's checkpoints; the table services' registry ties read's
    # checks to their jobs' specs, and read's measure of a table's need asks each service through it
    {"read", "locks", "sources", "table_services"},
    {"spark", "fleet"},  # the fleet ranks what read measures; the Spark jobs run what it picks
    {"airflow"},
]


def _layer(top: str) -> int:
    return next((i for i, names in enumerate(LAYERS) if top in names), len(LAYERS))


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hudi_ops."):
            out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("hudi_ops."))
    return out


def test_no_module_imports_a_higher_layer():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        top = rel.parts[0].removesuffix(".py")
        if top == "__init__":
            continue
        wrong += [f"{rel} imports hudi_ops.{dep}" for dep in _imports(path) if _layer(dep) > _layer(top)]
    assert wrong == []


def test_the_check_sees_imports():
    assert "format" in _imports(PACKAGE / "read" / "table_overview.py")
    assert _layer("format") > _layer("storage")
    assert _layer("read") == _layer("locks") < _layer("spark") < _layer("airflow") < _layer("cli")


def test_every_package_is_placed():
    """A new top-level package must be given a layer here (only single modules like cli.py sit on top)."""
    placed = set().union(*LAYERS)
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages - placed == {"demo", "local"}  # on top: what runs on this machine, and the demo
    assert placed <= packages | {p.stem for p in PACKAGE.glob("*.py")}
