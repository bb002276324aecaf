"""Lock providers, chosen by `hoodie.write.lock.provider` (Hudi's Java class names)."""
