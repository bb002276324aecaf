"""Record keys a table holds more than once, found in its latest snapshot as hudi-rs reads it.

Hudi's key is the record key and the partition path: a key twice within a partition is a duplicate for
every index (two writers inserting one new key at once under OCC, apache/hudi#9831; Hudi's `insert`,
which keeps the duplicates of its input). A key in several partitions is one only under a global index,
where a key belongs to one partition; under the others (Hudi's default among them) it is two records.
Only Hudi's meta fields say which key and partition a record was written under, so a table that does not
populate them is refused.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from hudi_ops.errors import InvalidInputError, StorageError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.meta_fields import FILE_NAME, PARTITION_PATH, RECORD_KEY
from hudi_ops.options.keys import IndexConfig

#: the index types that keep a key in one partition (Hudi 1.1.1's SparkHoodieIndexFactory.isGlobalIndex)
GLOBAL_INDEX_TYPES = ("GLOBAL_BLOOM", "GLOBAL_SIMPLE", "RECORD_INDEX", "GLOBAL_RECORD_LEVEL_INDEX", "INMEMORY")


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    """A key held `records` times within one partition, in these files."""

    key: str
    partition: str
    records: int
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class KeyInPartitions:
    """A key held in several partitions: how many records in each, and the files holding them."""

    key: str
    partitions: dict[str, int]
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DuplicateKeys:
    base_path: str
    records: int  # in the snapshot read
    index_type: str | None  # as the writers' options name it; None: Hudi's default (not global)
    within_partitions: tuple[DuplicateKey, ...]
    across_partitions: tuple[KeyInPartitions, ...]

    @property
    def global_index(self) -> bool:
        return is_global_index(self.index_type)

    @property
    def found(self) -> bool:
        """Whether the table holds a key more than once by its index's rules."""
        return bool(self.within_partitions) or (self.global_index and bool(self.across_partitions))

    def to_dict(self) -> dict[str, object]:
        return {"base_path": self.base_path, "records": self.records, "index_type": self.index_type,
                "global_index": self.global_index, "found": self.found,
                "within_partitions": [asdict(d) for d in self.within_partitions],
                "across_partitions": [asdict(k) for k in self.across_partitions]}


def is_global_index(index_type: str | None) -> bool:
    """Whether the index `index_type` (the writers' `hoodie.index.type`; None: Hudi's default) keeps a key in one
    partition, so that a key in several partitions is a duplicate."""
    return (index_type or "").upper() in GLOBAL_INDEX_TYPES


def require_meta_fields(meta: MetaClient) -> None:
    """Refuse a table whose records do not say which key and partition they were written under."""
    if not meta.properties.populates_meta_fields:
        raise InvalidInputError(f"{meta.base_path} is written with hoodie.populate.meta.fields=false: its records "
                                f"carry no {RECORD_KEY} or {PARTITION_PATH}, so which key and partition a record "
                                "was written under cannot be read back; compare its record key fields with a query "
                                "of your own")


def duplicate_keys(meta: MetaClient, options: Mapping[str, str]) -> DuplicateKeys:
    """The keys of `meta`'s table held more than once in its latest snapshot; `options`: the writers' `hoodie.*`
    options, which name the index (Hudi keeps it in the writers' configuration, not the table's)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from hudi import HudiReadOptions, HudiTable

    require_meta_fields(meta)
    try:
        batches = HudiTable(meta.base_path).read(HudiReadOptions(projection=[RECORD_KEY, PARTITION_PATH, FILE_NAME]))
    except Exception as e:  # hudi-rs raises plain exceptions with its own text; the table itself was found
        raise StorageError(f"hudi-rs cannot read {meta.base_path}: {e}") from None
    table = pa.Table.from_batches(batches) if batches else pa.table(
        {column: pa.array([], pa.string()) for column in (RECORD_KEY, PARTITION_PATH, FILE_NAME)})
    # grouped in Arrow: only the keys held more than once become Python objects, not every key of the table
    places = table.group_by([RECORD_KEY, PARTITION_PATH]).aggregate([(FILE_NAME, "count"), (FILE_NAME, "distinct")])
    spread = places.group_by(RECORD_KEY).aggregate([(PARTITION_PATH, "count")])
    across_keys = set(spread.filter(pc.greater(spread[f"{PARTITION_PATH}_count"], 1))[RECORD_KEY].to_pylist())
    doubled = pc.greater(places[f"{FILE_NAME}_count"], 1)
    spread_keys = pa.array(sorted(across_keys), places[RECORD_KEY].type)
    wanted = pc.or_(doubled, pc.is_in(places[RECORD_KEY], spread_keys))
    files: dict[tuple[str, str], list[str]] = {}
    counts: dict[tuple[str, str], int] = {}
    for row in places.filter(wanted).to_pylist():
        place = (row[RECORD_KEY], row[PARTITION_PATH])
        counts[place], files[place] = row[f"{FILE_NAME}_count"], row[f"{FILE_NAME}_distinct"]
    within = [DuplicateKey(key, partition, n, tuple(sorted(files[key, partition])))
              for (key, partition), n in sorted(counts.items()) if n > 1]
    partitions: dict[str, dict[str, int]] = defaultdict(dict)
    for (key, partition), n in counts.items():
        if key in across_keys:
            partitions[key][partition] = n
    across = [KeyInPartitions(key, dict(sorted(held.items())),
                              tuple(sorted(f for partition in held for f in files[key, partition])))
              for key, held in sorted(partitions.items())]
    return DuplicateKeys(meta.base_path, table.num_rows, options.get(IndexConfig.TYPE.name) or None, tuple(within),
                         tuple(across))
