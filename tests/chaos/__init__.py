"""The chaos run: concurrent pipelines on one table under kills and ZooKeeper restarts (`make chaos`)."""
