"""The Hudi table format, with no engine: properties, timeline, metadata, file names, views, files."""
