"""Run every benchmark in this folder; each prints one JSON line of figures and ratios."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    failed = 0
    here = Path(__file__)
    for script in sorted(p for p in here.parent.glob("*.py") if p != here):
        failed |= subprocess.call([sys.executable, str(script)]) != 0
    return failed


if __name__ == "__main__":
    sys.exit(main())
