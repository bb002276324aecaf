"""Where write work runs: engines implementing `hudi_ops.client.engine_context.Engine`."""
