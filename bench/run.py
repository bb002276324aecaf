"""Run every benchmark; each prints one JSON line of figures and ratios measured in the same run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: the benchmarks; the folder's other files are what they start (spark-submit applications) or share
BENCHMARKS = ("upsert_hudi_vs_naive.py", "platform_overhead.py", "commit_contention.py", "services_idle_tick.py",
              "mor_vs_cow.py", "clean_planning.py")


def main() -> int:
    failed = 0
    for script in BENCHMARKS:
        failed |= subprocess.call([sys.executable, str(Path(__file__).parent / script)]) != 0
    return failed


if __name__ == "__main__":
    sys.exit(main())
