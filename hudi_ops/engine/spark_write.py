"""A write planned and run over a Spark DataFrame, as Hudi's Spark write path does with RDDs.

1. prepare: keys, partition paths and casts, batch by batch on the executors (mapInArrow);
2. precombine: shuffle by (partition, key), keep each key's winner;
3. index: SIMPLE joins with the record keys read from the latest base files of the touched
   partitions; BLOOM first pairs each key with the files whose key range covers it, then checks
   those pairs file by file against the footer's bloom filter and the stored keys;
4. the driver gets counts per (partition, file group), checks the updated groups, sizes the insert
   buckets (small files, then new groups) and writes the inflight workload profile;
5. inserts go to a bucket of their partition by a hash of their key, weighted by bucket size (as
   Hudi's UpsertPartitioner does), so a retried task routes every record the same way;
6. one Arrow group per file group runs the write handle (applyInArrow); statuses come back pickled.

Only counts, file lists, key ranges and write statuses reach the driver, never the records.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from hudi_ops.client.grouping import group_rows
from hudi_ops.client.handles import WriteContext, WriteStatus
from hudi_ops.client.index import key_range_mask, keys_in_file
from hudi_ops.client.partitioner import InsertBucket
from hudi_ops.client.write_job import Deduper, FileGroupWrite, RecordPreparer, TaskRunner, WriteJob
from hudi_ops.client.write_operation import WriteOperation
from hudi_ops.client.write_schema import conform
from hudi_ops.format.base_file import read_footer
from hudi_ops.format.bloom import hash_positions
from hudi_ops.format.meta_fields import PARTITION_PATH, RECORD_KEY
from hudi_ops.storage import Storage

FILE_ID = "_hoodie_ops_file_id"  # the file group a record goes to (null: not placed yet)
SEQ = "_hoodie_ops_seq"  # input order, which breaks precombine ties as in a local write
PATH = "_hoodie_ops_path"
SLOT = "_hoodie_ops_slot"  # routes a file group's records to the Spark partition of its write task
LOCATION = pa.schema([(PARTITION_PATH, pa.string()), (RECORD_KEY, pa.string()), (FILE_ID, pa.string())])
STATUS = pa.schema([("status", pa.binary())])


def write_dataframe(spark: Any, job: WriteJob, df: Any) -> list[WriteStatus]:
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    keyed = (PARTITION_PATH, RECORD_KEY)
    # every shuffle by key uses the same partition count, so the index join keeps the records'
    # partitioning and precombine runs after it without another shuffle
    n = job.shuffle_parallelism or max(df.rdd.getNumPartitions(), spark.sparkContext.defaultParallelism)
    shuffled = job.deduper is not None or job.operation in (WriteOperation.UPSERT, WriteOperation.DELETE)
    seq_field = [pa.field(SEQ, pa.int64())] if job.deduper is not None else []
    prepared_schema = job.preparer.output_schema
    persisted = []
    try:
        source = df.withColumn(SEQ, F.monotonically_increasing_id()) if seq_field else df
        prepared = source.mapInArrow(
            _Prepare(job.preparer, keep_seq=bool(seq_field)), _spark_schema(pa.schema([*prepared_schema, *seq_field]))
        )
        if shuffled:
            prepared = prepared.repartition(n, *keyed)
        prepared = prepared.persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(prepared)
        per_partition = prepared.groupBy(PARTITION_PATH).agg(
            F.sum(F.length(RECORD_KEY) + F.length(PARTITION_PATH)).alias("key_bytes")
        ).collect()
        scope = job.scope(sorted(r[PARTITION_PATH] for r in per_partition))

        if scope.needs_index:
            files = [(b.partition_path, b.file_id, b.path) for b in scope.base_files.values()]
            incoming = prepared.select(*keyed)
            located = _locate(spark, job, files, prepared)
            # only the stored keys that come in again leave the files' tasks. Incoming keys below
            # Spark's broadcast threshold are broadcast from the start: left to AQE, both sides would
            # be shuffled before it switches to a broadcast join
            threshold = _size_bytes(spark.conf.get("spark.sql.autoBroadcastJoinThreshold"))
            if 0 <= sum(r["key_bytes"] or 0 for r in per_partition) <= threshold:
                located = located.join(F.broadcast(incoming), list(keyed), "left_semi")
                tagged = prepared.join(F.broadcast(located), list(keyed), "left")
            else:
                located = located.join(incoming, list(keyed), "left_semi")
                tagged = prepared.join(located.repartition(n, *keyed), list(keyed), "left")
        else:
            tagged = prepared.withColumn(FILE_ID, F.lit(None).cast("string"))
        if job.deduper is not None:  # all records of a key are in one partition since the shuffle
            with_file = prepared_schema.append(_FILE_ID)
            tagged = tagged.mapInArrow(_Precombine(job.deduper, with_file), _spark_schema(with_file))
        if job.operation is WriteOperation.DELETE:
            tagged = tagged.where(F.col(FILE_ID).isNotNull())  # keys that are not stored delete nothing
        tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(tagged)
        counts = tagged.groupBy(PARTITION_PATH, FILE_ID).count().collect()

        updates = {r[FILE_ID]: r["count"] for r in counts if r[FILE_ID] is not None}
        inserts = {r[PARTITION_PATH]: r["count"] for r in counts if r[FILE_ID] is None}
        scope.check_updates(updates)
        buckets = scope.insert_buckets(inserts)
        job.begin(job.workload_profile(inserts, scope.updates_profile(updates)))
        writes = scope.file_group_writes(updates, buckets)
        if not writes:
            return []
        # one Spark partition per file group: each group's records go to a slot value that Spark's
        # hash partitioning sends to the partition of the group's task index
        slots = _partition_slots(spark, len(writes))
        router = _Route.of(buckets, {fid: slots[w.task_index] for fid, w in writes.items()})
        routed = tagged.mapInArrow(router, _spark_schema(pa.schema([*prepared_schema, _FILE_ID, _SLOT])))
        write_group = _WriteFileGroup(job.context, writes, job.operation, prepared_schema)

        def write_one(rows: pa.Table) -> pa.Table:  # a plain function: Spark reads the arity to pass keys or not
            return write_group(rows)

        rows = routed.repartition(len(writes), SLOT).groupBy(SLOT, FILE_ID).applyInArrow(
            write_one, _spark_schema(STATUS)
        )
        statuses = [pickle.loads(r["status"]) for r in rows.collect()]
        return sorted(statuses, key=lambda s: writes[s.file_id].task_index)
    finally:
        for cached in persisted:
            cached.unpersist()


def _locate(spark: Any, job: WriteJob, files: list[tuple[str, str, str]], prepared: Any) -> Any:
    """(partition, key, file id) of stored keys: SIMPLE reads every latest base file's keys (with
    Spark's own parquet reader); BLOOM only the keys that pass a file's key range and bloom filter."""
    from pyspark.sql import functions as F

    if job.index_type != "BLOOM":
        # a base file is named <file id>_<write token>_<instant>.parquet
        return spark.read.parquet(*(job.storage.uri_of(path) for _, _, path in files)).select(
            PARTITION_PATH, RECORD_KEY, F.substring_index(F.col("_metadata.file_name"), "_", 1).alias(FILE_ID)
        )
    base_files = spark.createDataFrame(files, f"{PARTITION_PATH} string, {FILE_ID} string, {PATH} string")
    base_files = base_files.repartition(len(files))  # one file per task: read the footers in parallel
    ranges = base_files.mapInArrow(_KeyRanges(job.storage.uri), _spark_schema(_RANGES)).collect()
    by_partition: dict[str, list[tuple[str, str, str | None, str | None]]] = {}
    for r in ranges:
        by_partition.setdefault(r[PARTITION_PATH], []).append((r[FILE_ID], r[PATH], r["min_key"], r["max_key"]))
    pairs = prepared.select(PARTITION_PATH, RECORD_KEY).mapInArrow(
        _RangeCandidates(by_partition, job.prune_by_ranges), _spark_schema(_CANDIDATES)
    )
    return pairs.repartition(FILE_ID).mapInArrow(_LookUpKeys(job.storage.uri), _spark_schema(LOCATION))


_FILE_ID = pa.field(FILE_ID, pa.string())
_SLOT = pa.field(SLOT, pa.int64())
_RANGES = pa.schema([(PARTITION_PATH, pa.string()), (FILE_ID, pa.string()), (PATH, pa.string()),
                     ("min_key", pa.string()), ("max_key", pa.string())])
_CANDIDATES = LOCATION.append(pa.field(PATH, pa.string()))


def _size_bytes(text: str) -> int:
    """A Spark size setting ("10485760b", "10m", "-1") in bytes; -1 (disabled) when unreadable."""
    m = re.fullmatch(r"\s*(-?\d+)\s*([kmgtp]?)i?b?\s*", text.lower())
    return int(m.group(1)) * 1024 ** " kmgtp".index(m.group(2) or " ") if m else -1


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def _tables(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.Table]:
    for b in batches:
        if b.num_rows:
            yield pa.Table.from_batches([b])


def _whole(batches: Iterator[pa.RecordBatch]) -> pa.Table | None:
    """All rows of one Spark partition as one table (None when it has none)."""
    tables = list(_tables(batches))
    return pa.concat_tables(tables) if tables else None


@dataclass(frozen=True)
class _Prepare:
    preparer: RecordPreparer
    keep_seq: bool = False

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for t in _tables(batches):
            out = self.preparer(t)
            if self.keep_seq:
                out = out.append_column(SEQ, t.column(SEQ))
            yield from out.to_batches()


@dataclass(frozen=True)
class _Precombine:
    deduper: Deduper
    output: pa.Schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows = _whole(batches)
        if rows is None:
            return
        rows = rows.sort_by(SEQ)  # the shuffle lost the input order that breaks ties
        yield from self.deduper(rows).select(self.output.names).to_batches()


@dataclass(frozen=True)
class _KeyRanges:
    """Per base file: the min and max record key its footer records."""

    base_path: str

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        storage = Storage.for_uri(self.base_path)
        for t in _tables(batches):
            paths = t.column(PATH).to_pylist()
            footers = [read_footer(storage, p) for p in paths]
            yield pa.RecordBatch.from_arrays(
                [t.column(PARTITION_PATH).combine_chunks(), t.column(FILE_ID).combine_chunks(), pa.array(paths),
                 pa.array([f.min_record_key for f in footers], pa.string()),
                 pa.array([f.max_record_key for f in footers], pa.string())],
                schema=_RANGES,
            )


@dataclass(frozen=True)
class _RangeCandidates:
    """Each key paired with the base files of its partition whose key range covers it."""

    files: dict[str, list[tuple[str, str, str | None, str | None]]]  # partition -> (file id, path, min, max)
    prune_by_ranges: bool

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for t in _tables(batches):
            keys = t.column(RECORD_KEY).combine_chunks()
            for partition, rows in group_rows(t.column(PARTITION_PATH).to_numpy(zero_copy_only=False)).items():
                part_keys = keys.take(pa.array(rows))
                for fid, path, lo, hi in self.files.get(str(partition), ()):
                    hit = key_range_mask(part_keys, lo, hi) if self.prune_by_ranges else np.ones(len(rows), bool)
                    n = int(hit.sum())
                    if n:
                        yield pa.RecordBatch.from_arrays(
                            [pa.array([partition] * n, pa.string()), part_keys.filter(pa.array(hit)),
                             pa.array([fid] * n, pa.string()), pa.array([path] * n, pa.string())],
                            schema=_CANDIDATES,
                        )


@dataclass(frozen=True)
class _LookUpKeys:
    """Candidate (key, file) pairs confirmed against the file's bloom filter, then its stored keys."""

    base_path: str

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pairs = _whole(batches)
        if pairs is None:
            return
        storage = Storage.for_uri(self.base_path)
        paths = pairs.column(PATH).to_numpy(zero_copy_only=False)
        for path, rows in group_rows(paths).items():
            found = pairs.take(pa.array(rows))
            hit = keys_in_file(storage, str(path), found.column(RECORD_KEY).combine_chunks(), bloom=True)
            yield from found.filter(pa.array(hit)).select(LOCATION.names).to_batches()


def _partition_slots(spark: Any, k: int) -> list[int]:
    """For each of k partitions, a value that `repartition(k, col)` sends there (Spark hashes with
    Murmur3, so the values are found by asking Spark; 64 candidates per partition miss one with
    probability about e^-64)."""
    from pyspark.sql import functions as F

    if k not in _SLOTS:  # the hash is fixed (seed 42), so the answer holds for every session
        found = spark.range(0, 64 * k).groupBy(F.expr(f"pmod(hash(id), {k})").alias("p")).agg(F.min("id")).collect()
        slots = dict(found)
        _SLOTS[k] = [slots[i] for i in range(k)]
    return _SLOTS[k]


_SLOTS: dict[int, list[int]] = {}


@dataclass(frozen=True)
class _Route:
    """Gives each record its file group and slot; an insert goes to a bucket of its partition, by a
    hash of its key weighted by bucket size, so a retried task routes every record the same way."""

    buckets: dict[str, tuple[np.ndarray, tuple[str, ...]]]  # partition -> (cumulative counts, file ids)
    slots: dict[str, int]  # file id -> slot

    @classmethod
    def of(cls, buckets: list[InsertBucket], slots: dict[str, int]) -> _Route:
        per: dict[str, list[InsertBucket]] = {}
        for b in buckets:
            per.setdefault(b.partition_path, []).append(b)
        cumulative = {p: (np.cumsum([b.count for b in bs]), tuple(str(b.file_id) for b in bs)) for p, bs in per.items()}
        return cls(cumulative, slots)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for t in _tables(batches):
            fids = t.column(FILE_ID).to_numpy(zero_copy_only=False).astype(object)
            unplaced = t.column(PARTITION_PATH).to_numpy(zero_copy_only=False).astype(object)
            unplaced[np.not_equal(fids, None)] = None
            keys = t.column(RECORD_KEY).combine_chunks()
            for partition, rows in group_rows(unplaced).items():
                cumulative, names = self.buckets[str(partition)]
                pick = hash_positions(keys.take(pa.array(rows)), 1, int(cumulative[-1]))[:, 0]
                fids[rows] = np.asarray(names, dtype=object)[np.searchsorted(cumulative, pick, side="right")]
            slot = pa.array([self.slots[f] for f in fids], pa.int64())
            i = t.schema.get_field_index(FILE_ID)
            yield from t.set_column(i, _FILE_ID, pa.array(fids, pa.string())).append_column(_SLOT, slot).to_batches()


@dataclass(frozen=True)
class _WriteFileGroup:
    """One file group's records -> its write handle's status (pickled, one row)."""

    ctx: WriteContext
    writes: dict[str, FileGroupWrite]
    operation: WriteOperation
    prepared_schema: pa.Schema

    def __call__(self, rows: pa.Table) -> pa.Table:
        write = self.writes[rows.column(FILE_ID)[0].as_py()]
        records = conform(rows, self.prepared_schema)  # Spark may hand types back in its own flavour
        status = TaskRunner(self.ctx)(write.task(records, self.operation))
        return pa.Table.from_arrays([pa.array([pickle.dumps(status)], pa.binary())], schema=STATUS)
