"""Plans and results of table services, as the Avro records Hudi keeps on the timeline.

- `T.clean.requested` / `T_C.clean`: CleanerPlan / CleanMetadata
- `T.compaction.requested` (also `T.logcompaction.requested`): CompactionPlan
- `T.replacecommit.requested`, `T.clustering.requested`: RequestedReplaceMetadata
- `T.rollback.requested` / `T_C.rollback`: RollbackPlan / RollbackMetadata
- `T_C.savepoint`: SavepointMetadata

Python fields are snake_case; `avro_container.avro_name` maps them to Hudi's camelCase (one field,
`RollbackRequests`, is capitalised in Hudi and says so in its metadata). Defaults are the values
Spark on Hudi 1.0 writes; every field Hudi declares nullable stays nullable, so a null in a file
reads back as None rather than as the default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, TypeVar

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.avro_container import from_avro_record, read_single_record
from hudi_ops.format.file_group import FileGroupId
from hudi_ops.format.instant import Action

P = TypeVar("P", bound="_TimelineRecord")


class _TimelineRecord:
    """Mixin for the top-level records: one Avro container file each, of the record named `SCHEMA`."""

    __slots__ = ()
    SCHEMA: ClassVar[str]

    @classmethod
    def from_avro_bytes(cls: type[P], data: bytes) -> P:
        record = read_single_record(data, expect=cls.SCHEMA)
        if record is None:
            raise InvalidTableError(f"empty file where a {cls.SCHEMA} was expected")
        return from_avro_record(cls, record)


# --- clean ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionInstant:
    """`HoodieActionInstant`: an instant by time, action and state name (e.g. `COMPLETED`)."""

    timestamp: str
    action: str
    state: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanFileInfo:
    """`HoodieCleanFileInfo`: one file to delete (full path in Spark's plans)."""

    file_path: str | None = None
    is_bootstrap_base_file: bool | None = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanerPlan(_TimelineRecord):
    """`HoodieCleanerPlan` (plan version 2: files per partition as CleanFileInfo)."""

    SCHEMA: ClassVar[str] = "HoodieCleanerPlan"

    earliest_instant_to_retain: ActionInstant | None = None
    last_completed_commit_timestamp: str = ""
    policy: str
    #: deprecated plan-version-1 field; version 2 plans leave it empty
    files_to_be_deleted_per_partition: dict[str, tuple[str, ...]] | None = field(default_factory=dict)
    version: int | None = 2
    file_paths_to_be_deleted_per_partition: dict[str, tuple[CleanFileInfo, ...]] | None = field(
        default_factory=dict
    )
    partitions_to_be_deleted: tuple[str, ...] | None = ()
    extra_metadata: dict[str, str] | None = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanPartitionMetadata:
    """`HoodieCleanPartitionMetadata`: what one partition's clean deleted."""

    partition_path: str
    policy: str
    delete_path_patterns: tuple[str, ...] = ()
    success_delete_files: tuple[str, ...] = ()
    failed_delete_files: tuple[str, ...] = ()
    is_partition_deleted: bool | None = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanMetadata(_TimelineRecord):
    """`HoodieCleanMetadata`, the completed clean (metadata version 2)."""

    SCHEMA: ClassVar[str] = "HoodieCleanMetadata"

    start_clean_time: str
    time_taken_in_millis: int
    total_files_deleted: int
    earliest_commit_to_retain: str
    last_completed_commit_timestamp: str = ""
    partition_metadata: dict[str, CleanPartitionMetadata]
    version: int | None = 2
    bootstrap_partition_metadata: dict[str, CleanPartitionMetadata] | None = field(default_factory=dict)
    extra_metadata: dict[str, str] | None = None


# --- compaction ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionOperation:
    """`HoodieCompactionOperation`: one file slice to compact; plan version 2 uses bare file names."""

    base_instant_time: str | None
    delta_file_paths: tuple[str, ...] | None = ()
    data_file_path: str | None = None
    file_id: str | None
    partition_path: str | None = None
    metrics: dict[str, float] | None = None
    bootstrap_file_path: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionStrategy:
    """`HoodieCompactionStrategy` (set for log compaction)."""

    compactor_class_name: str | None = None
    strategy_params: dict[str, str] | None = None
    version: int | None = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPlan(_TimelineRecord):
    """`HoodieCompactionPlan`, the content of `T.compaction.requested`."""

    SCHEMA: ClassVar[str] = "HoodieCompactionPlan"

    operations: tuple[CompactionOperation, ...] | None = ()
    extra_metadata: dict[str, str] | None = field(default_factory=dict)
    version: int | None = 2
    strategy: CompactionStrategy | None = None
    preserve_hoodie_metadata: bool | None = False
    missing_schedule_partitions: tuple[str, ...] | None = ()


# --- clustering / insert overwrite ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SliceInfo:
    """`HoodieSliceInfo`: one file slice in a clustering group (Spark writes full paths here)."""

    data_file_path: str | None = None
    delta_file_paths: tuple[str, ...] | None = ()
    file_id: str | None
    partition_path: str | None = None
    bootstrap_file_path: str | None = ""
    version: int | None = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusteringGroup:
    """`HoodieClusteringGroup`: slices rewritten together into `num_output_file_groups` file groups."""

    slices: tuple[SliceInfo, ...] | None = ()
    metrics: dict[str, float] | None = None
    num_output_file_groups: int | None = 1
    extra_metadata: dict[str, str] | None = None
    version: int | None = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusteringStrategy:
    """`HoodieClusteringStrategy`: the Java execution strategy class and its parameters."""

    strategy_class_name: str | None = None
    strategy_params: dict[str, str] | None = field(default_factory=dict)
    version: int | None = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusteringPlan:
    """`HoodieClusteringPlan`."""

    input_groups: tuple[ClusteringGroup, ...] | None = ()
    strategy: ClusteringStrategy | None = None
    extra_metadata: dict[str, str] | None = field(default_factory=dict)
    version: int | None = 1
    preserve_hoodie_metadata: bool | None = True
    missing_schedule_partitions: tuple[str, ...] | None = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestedReplaceMetadata(_TimelineRecord):
    """`HoodieRequestedReplaceMetadata`. Insert overwrite writes it with every field null (the
    defaults); clustering sets `operation_type="CLUSTER"` and a plan."""

    SCHEMA: ClassVar[str] = "HoodieRequestedReplaceMetadata"

    operation_type: str | None = None
    clustering_plan: ClusteringPlan | None = None
    extra_metadata: dict[str, str] | None = None
    version: int | None = None


# --- rollback ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class InstantInfo:
    """`HoodieInstantInfo`: requested time and action of an instant."""

    commit_time: str
    action: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RollbackRequest:
    """`HoodieRollbackRequest`: files to delete, or (MOR, existing file group) log blocks to undo
    by appending a rollback command block. Spark writes "" for unused ids and full paths."""

    partition_path: str
    file_id: str | None = ""
    latest_base_instant: str | None = ""
    files_to_be_deleted: tuple[str, ...] = ()
    log_blocks_to_be_deleted: dict[str, int] | None = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class RollbackPlan(_TimelineRecord):
    """`HoodieRollbackPlan`, the content of `T.rollback.requested`."""

    SCHEMA: ClassVar[str] = "HoodieRollbackPlan"

    instant_to_rollback: InstantInfo | None = None
    rollback_requests: tuple[RollbackRequest, ...] | None = field(
        default=(), metadata={"avro": "RollbackRequests"}
    )
    version: int | None = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class RollbackPartitionMetadata:
    """`HoodieRollbackPartitionMetadata`: what a rollback did in one partition (file -> size maps)."""

    partition_path: str
    success_delete_files: tuple[str, ...] = ()
    failed_delete_files: tuple[str, ...] = ()
    rollback_log_files: dict[str, int] | None = field(default_factory=dict)
    log_files_from_failed_commit: dict[str, int] | None = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class RollbackMetadata(_TimelineRecord):
    """`HoodieRollbackMetadata`, the completed rollback."""

    SCHEMA: ClassVar[str] = "HoodieRollbackMetadata"

    start_rollback_time: str
    time_taken_in_millis: int
    total_files_deleted: int
    commits_rollback: tuple[str, ...]
    partition_metadata: dict[str, RollbackPartitionMetadata]
    version: int | None = 1
    instants_rollback: tuple[InstantInfo, ...] = ()


# --- savepoint -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SavepointPartitionMetadata:
    """`HoodieSavepointPartitionMetadata`: the base files a savepoint pins in one partition."""

    partition_path: str
    savepoint_data_file: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SavepointMetadata(_TimelineRecord):
    """`HoodieSavepointMetadata`, the content of `T_C.savepoint`."""

    SCHEMA: ClassVar[str] = "HoodieSavepointMetadata"

    savepointed_by: str
    savepointed_at: int
    comments: str
    partition_metadata: dict[str, SavepointPartitionMetadata]
    version: int | None = 1


# -- what a plan names ---------------------------------------------------------------------------------


def plan_file_groups(action: str, data: bytes) -> tuple[FileGroupId, ...] | None:
    """The file groups a table service's plan names, read from its `.requested` file: a (log)
    compaction's operations, a clustering's input slices. None when the instant holds no such plan (an
    insert overwrite's replacecommit, an empty requested file, any other action)."""
    if action in (Action.COMPACTION, Action.LOG_COMPACTION):
        plan = CompactionPlan.from_avro_bytes(data)
        return tuple(FileGroupId(op.partition_path or "", op.file_id or "") for op in plan.operations or ())
    if action not in (Action.CLUSTERING, Action.REPLACE_COMMIT) or not data:
        return None
    requested = RequestedReplaceMetadata.from_avro_bytes(data)
    if requested.clustering_plan is None:
        return None
    return tuple(FileGroupId(s.partition_path or "", s.file_id or "")
                 for g in requested.clustering_plan.input_groups or () for s in g.slices or ())
