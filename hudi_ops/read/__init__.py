"""Readers: snapshot, time travel, incremental and read-optimized queries, all returning Arrow."""
