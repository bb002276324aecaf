"""hudi-ops' operators: the Spark jobs' (writes and repairs), one per table service, and the restore DAG's
pause and unpause of a table's writers."""
