"""The README's benchmark table is the one `make bench` makes from the kept results (bench/run.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH_RUN = Path(__file__).resolve().parents[2] / "bench" / "run.py"


def test_the_readme_benchmark_table_is_the_one_the_kept_results_make():
    spec = importlib.util.spec_from_file_location("bench_run", BENCH_RUN)
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    results = run.kept_results()
    expected = run.table(results) if results else ""
    assert run.readme_table(run.README.read_text()) == expected
    assert all(r["measured"] for r in results)  # each row says when it was measured
