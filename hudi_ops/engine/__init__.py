"""Where write work runs: the engine interface and its local (in-process) implementation."""
