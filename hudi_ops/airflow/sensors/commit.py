"""`HudiCommitSensor`: wait until a table has a completed write that finished after a given time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue

from hudi_ops.airflow.hooks.aws import table_s3
from hudi_ops.errors import TableNotFoundError
from hudi_ops.format.meta_client import MetaClient


class HudiCommitSensor(BaseSensorOperator):
    """Succeeds once `base_path` has a completed commit, deltacommit or replacecommit whose completion
    time is after `after` (a Hudi instant time; any commit when empty). Its XCom value names the
    newest such instant. A table that does not exist yet counts as no commit."""

    template_fields: Sequence[str] = ("base_path", "after")

    def __init__(self, *, base_path: str, after: str | None = None, aws_conn_id: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base_path, self.after, self.aws_conn_id = base_path, after, aws_conn_id

    def poke(self, context: Any) -> PokeReturnValue:
        try:
            timeline = MetaClient.open(self.base_path, s3=table_s3(self.aws_conn_id)).timeline()
        except TableNotFoundError:
            return PokeReturnValue(is_done=False)
        done = [(timeline.completion_time(i), i.requested_time, i.action) for i in timeline.completed_writes()]
        newer = sorted(d for d in done if not self.after or d[0] > self.after)
        if not newer:
            return PokeReturnValue(is_done=False)
        completion, instant, action = newer[-1]
        return PokeReturnValue(is_done=True, xcom_value={"instant": instant, "completion_time": completion,
                                                         "action": action})
