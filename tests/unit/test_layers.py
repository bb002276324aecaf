"""Dependencies flow one way (docs/design.md, Layout): a module imports only from its own layer or lower ones."""

from __future__ import annotations

import ast
from pathlib import Path

import hudi_ops

PACKAGE = Path(hudi_ops.__file__).parent
# lowest first; modules not listed sit on top (the CLI)
LAYERS = [
    {"errors", "options", "storage", "s3_settings", "maven"},
    {"job_specs"},  # the contract between Airflow and the Spark jobs
    {"format"},
    # a source's new work is read against the table's checkpoints; the table services' registry ties read's
    # checks to their jobs' specs, and read's measure of a table's need asks each service through it
    {"read", "locks", "sources"},
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
    assert packages - placed == set()
    assert placed <= packages | {p.stem for p in PACKAGE.glob("*.py")}


def test_the_product_never_imports_the_development_side():
    """local_platform (make up, the demo, the tests' servers), tests and bench are not in the wheel."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            wrong += [f"{path.relative_to(PACKAGE)} imports {n}" for n in names
                      if n.split(".")[0] in ("local_platform", "tests", "bench")]
    assert wrong == []


def _module_imports() -> dict[str, set[str]]:
    """Each module of the package (dotted) and the package's modules it imports, wherever in it."""
    names = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
             for p in PACKAGE.rglob("*.py")}

    def module(name: str) -> str | None:  # `from hudi_ops.x import y`: y may be a module or a name in x
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hudi_ops"):
                found.update(module(f"{node.module}.{a.name}") for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(module(a.name) for a in node.names if a.name.startswith("hudi_ops"))
        graph[name] = found - {None, name}  # type: ignore[operator]
    return graph


def test_no_module_reaches_itself_through_its_imports():
    """No circle, even a lazy one inside a function: each module can be read, and moved, without the others
    that would import it back."""
    graph = _module_imports()
    circles = []
    for start in graph:
        seen, frontier = set(), set(graph[start])
        while frontier:
            seen |= frontier
            frontier = {b for a in frontier for b in graph[a]} - seen
        if start in seen:
            circles.append(start)
    assert circles == []


def test_the_circle_check_sees_a_lazy_import():
    assert "hudi_ops.spark.driver_jvm" in _module_imports()["hudi_ops.spark.class_sharing"]
    assert "hudi_ops.spark.jobs.ingest" in _module_imports()["hudi_ops.spark.__main__"]  # inside _run()


#: hudi_ops.airflow's rooms, lowest first: the provider (hooks, operators, sensors, triggers, timetables,
#: lineage, metrics), the DAG factory built on it, the UI that shows what the factory's config holds
AIRFLOW_ROOMS = [{"hooks", "operators", "sensors", "triggers", "timetables", "lineage", "metrics", "__init__"},
                 {"dag_factory"}, {"ui"}]


def test_the_provider_comes_apart_from_the_dag_factory_and_the_ui():
    def room(module: str) -> int:
        part = module.split(".")[2] if module.count(".") >= 2 else "__init__"
        return next(i for i, names in enumerate(AIRFLOW_ROOMS) if part in names)

    airflow = {m: deps for m, deps in _module_imports().items() if m.startswith("hudi_ops.airflow")}
    wrong = [f"{m} imports {d}" for m, deps in airflow.items() for d in deps
             if d.startswith("hudi_ops.airflow.") and room(d) > room(m)]
    assert wrong == []
    assert room("hudi_ops.airflow.operators.spark_jobs") < room("hudi_ops.airflow.dag_factory.factory") \
        < room("hudi_ops.airflow.ui.plugin")
