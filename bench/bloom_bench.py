"""Time adding record keys to Hudi's default DYNAMIC_V0 bloom filter: numpy version vs a pure-Python loop.

The loop runs the same algorithm key by key on a smaller sample (it is far slower) and is scaled to
the full key count. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import random
import struct
import time
import uuid
from collections.abc import Callable

from hudi_ops.format.bloom import DynamicBloomFilter, SimpleBloomFilter

_MASK = 0xFFFFFFFF
_M = 0x5BD1E995


def _murmur(data: bytes, seed: int) -> int:
    """Hadoop MurmurHash2 as Java computes it, one key at a time; returns a signed 32-bit int."""
    h = (seed ^ len(data)) & _MASK
    n_words = len(data) // 4
    for (k,) in struct.iter_unpack("<I", data[: 4 * n_words]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        h = ((h * _M) & _MASK) ^ ((k * _M) & _MASK)
    tail = data[4 * n_words :]
    if tail:
        for shift, b in zip((0, 8, 16), reversed(tail), strict=False):
            h ^= ((b - 256 if b >= 128 else b) << shift) & _MASK  # Java bytes are sign-extended
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def python_loop_add(keys: list[str], num_hashes: int, vector_size: int) -> bytearray:
    """Set the filter bits of `keys` (a single row) with a plain loop over keys and hash rounds."""
    bits = bytearray((vector_size + 7) // 8)
    for key in keys:
        data, h = key.encode(), 0
        for _ in range(num_hashes):
            h = _murmur(data, h)
            pos = abs(int(math.fmod(h, vector_size)))
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
    parser.add_argument("--baseline-keys", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    rnd = random.Random(42)
    keys = [str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(args.keys)]
    sample = keys[: args.baseline_keys]
    simple = SimpleBloomFilter()  # same sizes as the dynamic filter's rows

    numpy_s = _best_of(args.runs, lambda: DynamicBloomFilter().add_all(keys))
    start = time.perf_counter()
    loop_bits = python_loop_add(sample, simple.num_hashes, simple.vector_size)
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
        "python_loop_keys_measured": len(sample),
        "python_loop_measured_s": round(loop_s, 4),
        "python_loop_scaled_s": round(loop_scaled_s, 3),
        "speedup": round(loop_scaled_s / numpy_s, 1),
        "bits_identical": same,
    }))


if __name__ == "__main__":
    main()
