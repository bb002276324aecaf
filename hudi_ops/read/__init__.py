"""What the control plane derives from a table without a JVM: overviews, pipeline checkpoints, work to do."""
