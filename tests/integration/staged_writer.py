"""A writer process that stops between writing its files and committing them, until told to go on.

`python -m tests.integration.staged_writer PATH OPTIONS_JSON OPERATION ROWS_JSON OUT`: starts an
instant, writes ROWS, creates `OUT.written`, waits for `OUT.go`, commits, and writes its outcome to
OUT as JSON: {"instant", "completed"} or {"error": class name, "message"}.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pyarrow as pa

from hudi_ops import HudiTable, WriteOperation
from hudi_ops.errors import HudiOpsError


def main(path: str, options: dict[str, str], operation: str, rows: list[dict], out: Path) -> None:
    with HudiTable.open(path).write_client(options) as client:
        instant = client.start_commit()
        statuses = client.write(pa.Table.from_pylist(rows), instant, WriteOperation.parse(operation))
        Path(f"{out}.written").touch()
        while not Path(f"{out}.go").exists():
            time.sleep(0.01)
        try:
            result = client.commit(instant, statuses)
            outcome = {"instant": instant, "completed": result.completion_time}
        except HudiOpsError as e:
            outcome = {"instant": instant, "error": type(e).__name__, "message": str(e)}
    out.write_text(json.dumps(outcome))


if __name__ == "__main__":
    p, opts, op, rows, out = sys.argv[1:]
    main(p, json.loads(opts), op, json.loads(rows), Path(out))
