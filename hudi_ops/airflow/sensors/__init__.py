"""hudi-ops' sensors (the restore DAG's wait for idle writers is with its operators)."""
