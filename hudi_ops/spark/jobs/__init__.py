"""One module per job; each turns parsed flags into a write and returns a JobResult."""
