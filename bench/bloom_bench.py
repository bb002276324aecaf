"""Time adding record keys to Hudi's default DYNAMIC_V0 bloom filter: batched vs key by key.

`add_all` hashes all keys of a batch together (grouped by length, every hash round vectorised);
the baseline calls the same hashing once per key, on a smaller sample scaled to the full count.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import random
import time
import uuid
from collections.abc import Callable

from hudi_ops.format.bloom import DynamicBloomFilter, SimpleBloomFilter, hash_positions


def key_by_key_add(keys: list[str], num_hashes: int, vector_size: int) -> bytearray:
    """Set the filter bits of `keys` (a single row) hashing one key per call, as a naive caller would."""
    bits = bytearray((vector_size + 7) // 8)
    for key in keys:
        for pos in hash_positions([key], num_hashes, vector_size)[0]:
            bits[pos >> 3] |= 1 << (pos & 7)
    return bits


def _best_of(runs: int, fn: Callable[[], object]) -> float:
    best = math.inf
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--baseline-keys", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    rnd = random.Random(42)
    keys = [str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(args.keys)]
    sample = keys[: args.baseline_keys]
    simple = SimpleBloomFilter()  # same sizes as the dynamic filter's rows

    numpy_s = _best_of(args.runs, lambda: DynamicBloomFilter().add_all(keys))
    start = time.perf_counter()
    loop_bits = key_by_key_add(sample, simple.num_hashes, simple.vector_size)
    loop_s = time.perf_counter() - start
    loop_scaled_s = loop_s * len(keys) / len(sample)
    # Both must set the same bits: a SIMPLE filter serializes as a 13-byte header and its bit vector.
    simple.add_all(sample)
    same = base64.b64decode(simple.serialize())[13:] == loop_bits

    print(json.dumps({
        "bench": "bloom_add_all",
        "keys": len(keys),
        "key_kind": "uuid4 string",
        "num_hashes": simple.num_hashes,
        "vector_size": simple.vector_size,
        "numpy_s": round(numpy_s, 4),
        "numpy_keys_per_s": round(len(keys) / numpy_s),
        "key_by_key_keys_measured": len(sample),
        "key_by_key_measured_s": round(loop_s, 4),
        "key_by_key_scaled_s": round(loop_scaled_s, 3),
        "speedup": round(loop_scaled_s / numpy_s, 1),
        "bits_identical": same,
    }))


if __name__ == "__main__":
    main()
