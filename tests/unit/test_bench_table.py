"""docs/benchmarks.md's table of the latest figures is the one `make bench` makes from the kept results
(bench/run.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH_RUN = REPO / "bench" / "run.py"


def test_the_benchmarks_doc_table_is_the_one_the_kept_results_make():
    spec = importlib.util.spec_from_file_location("bench_run", BENCH_RUN)
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    assert run.TABLE_DOC.relative_to(REPO).as_posix() == "docs/benchmarks.md"
    results = run.kept_results()
    expected = run.table(results) if results else ""
    assert run.doc_table(run.TABLE_DOC.read_text()) == expected
    assert all(r["measured"] for r in results)  # each row says when it was measured
