"""Spark failures that are really hudi-ops errors, turned back into them.

An error raised in a Python task reaches the driver as Spark's PythonException, with the task's
traceback as text; a file Spark cannot read arrives as a Java exception naming the file. Both are
turned into the hudi-ops error they stand for, so callers (and exit codes) see bad input as such.
"""

from __future__ import annotations

import re

from hudi_ops import errors
from hudi_ops.errors import HudiOpsError, InvalidInputError

# errors whose constructor takes just the message, so they can be rebuilt from a task's traceback
_REBUILDABLE = (errors.InvalidInputError, errors.ConfigError, errors.InvalidTableError, errors.StorageError)
_TASK_ERROR = re.compile(r"^hudi_ops\.errors\.(\w+): (.*)$", re.MULTILINE)
_UNREADABLE = re.compile(r"\[FAILED_READ_FILE[.\w]*\][^\n]*?reading file (\S+?)\.?\s+(?:SQLSTATE|$)", re.MULTILINE)
_CAUSE = re.compile(r"^Caused by: [\w.$]+: (.*)$", re.MULTILINE)


def translate_spark_error(error: Exception) -> HudiOpsError | None:
    """The hudi-ops error a Spark failure stands for, or None when it is Spark's own."""
    if isinstance(error, HudiOpsError):
        return None
    text = str(error)
    for name, message in _TASK_ERROR.findall(text):
        cls = getattr(errors, name, None)
        if cls in _REBUILDABLE:
            return cls(message)
    unreadable = _UNREADABLE.search(text)
    if unreadable:
        cause = _CAUSE.search(text)
        reason = f": {cause.group(1)[:300]}" if cause else ""
        return InvalidInputError(
            f"Spark cannot read the input file {unreadable.group(1)}{reason}; fix or remove the file and re-run"
        )
    return None
