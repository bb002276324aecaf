"""Where the shared reference data lives: `../shared` beside the repository (as in CI)."""

from __future__ import annotations

import zipfile
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
FIXTURES = SHARED / "fixtures" / "hudi-rs"
REFERENCE = SHARED / "reference"


def unzip_fixture(relative_zip: str, dest: Path) -> Path:
    """Unzip one fixture table (without macOS resource forks) into `dest`; returns the table's base path."""
    zip_path = FIXTURES / relative_zip
    with zipfile.ZipFile(zip_path) as z:
        members = [m for m in z.namelist() if not m.startswith("__MACOSX/")]
        z.extractall(dest, members)
    return dest / Path(relative_zip).stem
