"""Stopping a table's writers around an operation that must have the table to itself (a restore).

Once a DAG is paused the scheduler starts none of its tasks, but the task instances an executor
already has run on. So the pause is followed by a wait until the writer DAGs have no queued,
running, restarting or deferred task instance and no write on the table keeps a live heartbeat (a
write can outlive its task: a killed spark-submit's beats for a while). Runs that were under way stay
frozen and go on after the unpause. Afterwards the DAGs this run paused are unpaused, those a person
had paused stay so, unless the table was left mid-restore: then every writer stays paused, for a
person to look at, since a write would land on a table whose restore is half done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator, BaseSensorOperator
from airflow.sdk.exceptions import AirflowFailException

from hudi_ops.airflow.hooks.airflow_api import DEFAULT_CONN_ID, AirflowApiHook
from hudi_ops.airflow.hooks.aws import table_s3
from hudi_ops.errors import TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.read.heartbeats import live_writes
from hudi_ops.read.pending_plans import pending_restores


class PauseWritersOperator(BaseOperator):
    """Pauses `writer_dag_ids`; returns the ones it paused (those not paused already)."""

    def __init__(self, *, writer_dag_ids: Sequence[str], airflow_api_conn_id: str = DEFAULT_CONN_ID,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.writer_dag_ids, self.airflow_api_conn_id = list(writer_dag_ids), airflow_api_conn_id

    def execute(self, context: Any) -> list[str]:
        api = AirflowApiHook(self.airflow_api_conn_id).get_conn()
        paused: list[str] = []
        try:
            for dag_id in self.writer_dag_ids:
                if not api.is_paused(dag_id):
                    api.set_paused(dag_id, True)
                    paused.append(dag_id)
                    self.log.info("paused %s", dag_id)
        except Exception:
            for dag_id in paused:  # all or nothing: leave the writers as they were
                api.set_paused(dag_id, False)
            raise
        return paused


class WritersIdleSensor(BaseSensorOperator):
    """Waits until the writer DAGs have no task instance at work and no write to the table has a live
    heartbeat."""

    def __init__(self, *, writer_dag_ids: Sequence[str], base_path: str,
                 hoodie_conf: dict[str, str] | None = None, airflow_api_conn_id: str = DEFAULT_CONN_ID,
                 aws_conn_id: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("poke_interval", 10)
        kwargs.setdefault("timeout", 3600)
        kwargs.setdefault("mode", "reschedule")  # a wait of up to an hour holds no worker slot
        super().__init__(**kwargs)
        self.writer_dag_ids, self.base_path = list(writer_dag_ids), base_path
        self.hoodie_conf, self.airflow_api_conn_id = dict(hoodie_conf or {}), airflow_api_conn_id
        self.aws_conn_id = aws_conn_id  # a table on S3

    def poke(self, context: Any) -> bool:
        api = AirflowApiHook(self.airflow_api_conn_id).get_conn()
        active = {d: tasks for d in self.writer_dag_ids if (tasks := api.active_tasks(d))}
        if active:
            self.log.info("writer tasks still at work: %s", active)
            return False
        try:
            meta = MetaClient.open(self.base_path, s3=table_s3(self.aws_conn_id))
        except TableNotFoundError:
            return True
        live = live_writes(meta, HoodieConfig(self.hoodie_conf))
        if live:
            self.log.info("writes with a live heartbeat on %s: %s", self.base_path, live)
        return not live


class UnpauseWritersOperator(BaseOperator):
    """Unpauses what `pause_task_id` paused, unless the table is left mid-restore; then fails (so the
    run does) when `work_task_id`, the operation the writers were paused for, returned nothing."""

    def __init__(self, *, pause_task_id: str, work_task_id: str, base_path: str,
                 airflow_api_conn_id: str = DEFAULT_CONN_ID, aws_conn_id: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("trigger_rule", "all_done")  # after a failed restore too: it decides itself
        super().__init__(**kwargs)
        self.pause_task_id, self.work_task_id = pause_task_id, work_task_id
        self.base_path, self.airflow_api_conn_id, self.aws_conn_id = base_path, airflow_api_conn_id, aws_conn_id

    def execute(self, context: Any) -> list[str]:
        paused = context["ti"].xcom_pull(task_ids=self.pause_task_id) or []
        unfinished = self._pending_restores()
        if unfinished:
            raise AirflowFailException(
                f"the restore {', '.join(unfinished)} of {self.base_path} did not complete, so the writers "
                f"{', '.join(paused) or '(none paused by this run)'} stay paused; run the restore again, "
                "then unpause them in the UI")
        api = AirflowApiHook(self.airflow_api_conn_id).get_conn()
        for dag_id in paused:
            api.set_paused(dag_id, False)
            self.log.info("unpaused %s", dag_id)
        if context["ti"].xcom_pull(task_ids=self.work_task_id) is None:  # it returns its result when it ran
            raise AirflowFailException(
                f"{self.work_task_id} did not run, or failed before changing {self.base_path}; the writers "
                f"{', '.join(paused) or '(none paused by this run)'} run again; the log of the run's failed task "
                "says why")
        return paused

    def _pending_restores(self) -> list[str]:
        try:
            return pending_restores(MetaClient.open(self.base_path, s3=table_s3(self.aws_conn_id)).timeline())
        except TableNotFoundError:
            return []
