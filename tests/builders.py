"""Timeline states for tests: pending table-service plans over chosen file groups, as Java would write them."""

from __future__ import annotations

from hudi_ops import HudiTable
from hudi_ops.format.file_group import BaseFile
from hudi_ops.format.instant import Action, InstantTimeGenerator
from hudi_ops.format.plans import (
    ClusteringGroup,
    ClusteringPlan,
    CompactionOperation,
    CompactionPlan,
    RequestedReplaceMetadata,
    SliceInfo,
)
from hudi_ops.format.transitions import create_requested


def _request(table: HudiTable, action: str, content: bytes) -> str:
    timeline = table.timeline()
    instant = InstantTimeGenerator.next(timeline.max_time)
    create_requested(timeline, instant, action, content)
    return instant


def schedule_clustering(table: HudiTable, target: BaseFile) -> str:
    """Write `T.clustering.requested` planning to rewrite `target`'s file group; returns T."""
    plan = RequestedReplaceMetadata(operation_type="CLUSTER", version=1, clustering_plan=ClusteringPlan(
        input_groups=(ClusteringGroup(slices=(SliceInfo(
            data_file_path=target.path, file_id=target.file_id, partition_path=target.partition_path),)),)))
    return _request(table, Action.CLUSTERING, plan.to_avro_bytes())


def schedule_compaction(table: HudiTable, target: BaseFile) -> str:
    """Write `T.compaction.requested` planning to compact `target`'s slice; returns T."""
    plan = CompactionPlan(version=2, operations=(CompactionOperation(
        base_instant_time=target.instant_time, data_file_path=target.name.file_name, file_id=target.file_id,
        partition_path=target.partition_path, delta_file_paths=()),))
    return _request(table, Action.COMPACTION, plan.to_avro_bytes())
