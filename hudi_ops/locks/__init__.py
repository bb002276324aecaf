"""The table lock as Hudi\x27s Java writers take it, seen and held from Python."""
