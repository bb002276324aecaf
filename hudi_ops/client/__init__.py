"""The write client: keys, precombine, index, partitioner, write handles and the commit protocol."""
