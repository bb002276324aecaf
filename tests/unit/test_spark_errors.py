"""Spark failures turned back into the hudi-ops errors they stand for."""

from __future__ import annotations

from hudi_ops.engine.spark_errors import translate_spark_error
from hudi_ops.errors import InvalidInputError, InvalidTableError, WriteConflictError

TASK_FAILURE = """An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "worker.py", line 20, in __call__
    raise InvalidInputError(...)
hudi_ops.errors.InvalidInputError: ordering field 'ts' is null in 1 row(s); event-time ordering needs a value
"""

UNREADABLE = """An error occurred while calling o117.collectToPython.
: org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while reading file \
file:///data/in/b.parquet.  SQLSTATE: KD001
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.cannotReadFilesError(QueryExecutionErrors.scala:800)
Caused by: java.lang.RuntimeException: file:/data/in/b.parquet is not a Parquet file. Expected magic number at tail
"""


def test_an_input_error_raised_in_a_task_comes_back_as_itself():
    error = translate_spark_error(RuntimeError(TASK_FAILURE))
    assert isinstance(error, InvalidInputError)
    assert str(error).startswith("ordering field 'ts' is null in 1 row(s)")


def test_a_table_error_keeps_its_class():
    text = TASK_FAILURE.replace("InvalidInputError: ordering", "InvalidTableError: ordering")
    assert type(translate_spark_error(RuntimeError(text))) is InvalidTableError


def test_an_unreadable_file_is_named_with_its_cause():
    error = translate_spark_error(RuntimeError(UNREADABLE))
    assert isinstance(error, InvalidInputError)
    assert "file:///data/in/b.parquet:" in str(error) and "is not a Parquet file" in str(error)


def test_spark_own_failures_and_errors_that_need_more_than_a_message_stay_as_they_are():
    assert translate_spark_error(RuntimeError("java.lang.OutOfMemoryError: Java heap space")) is None
    conflict = TASK_FAILURE.replace("InvalidInputError: ordering", "WriteConflictError: ordering")
    assert translate_spark_error(RuntimeError(conflict)) is None
    assert translate_spark_error(WriteConflictError("1", "2", ["g"])) is None
