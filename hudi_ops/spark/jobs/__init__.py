"""The jobs: a module per job named for it (`ingest`, with `kafka_ingest` and `upstream_ingest` for its other
sources; `backfill`, `dedupe`, `clean`, `archive`, `savepoint`, `restore`, `rollback_failed`; `compact` and
`cluster` run through `plan_execution`), each taking its parsed spec and returning a JobResult or a
ServiceResult, and what they share: the write through Hudi's datasource (`hudi_write`, `target`,
`table_creation`, `input_schema`, `error_table`, `batch_fence`), Hudi's write client (`write_client`,
`failed_writes`) and the catalog sync after a commit (`meta_sync`)."""
