"""Table services: plan, then execute, each recorded on the timeline (rollback first; clean, compact,
cluster and archive follow)."""
