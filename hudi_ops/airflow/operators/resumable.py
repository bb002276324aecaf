"""A try's cluster-mode driver (a YARN application, a Kubernetes driver pod), kept in Airflow's task state store
so that the task's next try takes it up.

Airflow 3.3 keeps, per task of a run, a store every try of that task shares (`context["task_state_store"]`;
older Airflow has none, and a retry then does what it always did: ends the earlier try's application and
submits anew). Before spark-submit a try records the task's tag, where its job writes its final line, the
run's clear number, and the drivers already tagged so (an earlier clear's); on YARN, once it has accepted
the job, the application's id. A retry of the same clear of the run that finds that driver
- still running takes it up: follows it to its end and reads its final line;
- ended well reads its final line, if it is there (a try that read it removes it);
- otherwise submits anew, as the first try did.
The store outlives a cleared run (Airflow 3.3 deletes no key on a clear), and a cleared run writes anew
(hudi_ops.airflow.operators.spark_jobs.run_identity), so a record of another clear number is not taken up. A try
that died before the record of its driver's id (on Kubernetes there is none: spark-submit waits for the
driver's end) finds it by its tag: the newest driver tagged so that the record did not know before.

The Spark provider's own durable execution (6.2 on, `ResumableJobMixin`) records the application id alone
and needs the provider's ResourceManager tracking; hudi-ops needs its result line and runs on provider 5.x
as well, so it keeps its own record.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hudi_ops.spark.cluster_drivers import ClusterDrivers, Driver

try:
    from airflow.sdk import NEVER_EXPIRE  # Airflow 3.3's, as is the store
except ImportError:  # before 3.3 there is no store to keep a record in
    NEVER_EXPIRE = None

#: the key in the task's state store; renaming it strands the applications of the tries running at the time
KEY = "hudi-ops-cluster-driver"


@dataclasses.dataclass(frozen=True)
class SubmittedApplication:
    """What a try recorded of the job it submitted."""

    tag: str
    result_uri: str
    clear_number: int
    known: tuple[str, ...] = ()  # the drivers tagged `tag` before this submission
    application_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"tag": self.tag, "result_uri": self.result_uri, "clear_number": self.clear_number,
                "known": list(self.known), "application_id": self.application_id}

    @classmethod
    def from_json(cls, value: Any) -> SubmittedApplication | None:
        """The record, or None when the value is not one (another version's, or damaged): not taken up."""
        try:
            if not isinstance(value.get("known", []), list):
                return None
            return cls(tag=str(value["tag"]), result_uri=str(value["result_uri"]),
                       clear_number=int(value["clear_number"]), known=tuple(map(str, value.get("known", ()))),
                       application_id=value.get("application_id") and str(value["application_id"]))
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def find(self, cluster: ClusterDrivers) -> Driver | None:
        """The driver this record's try submitted, as the cluster reports it now; None: there is none (its
        spark-submit failed, or the cluster no longer reports it)."""
        if self.application_id:
            return cluster.get(self.application_id)
        new = [driver for driver in cluster.tagged(self.tag) if driver.id not in self.known]
        return new[-1] if new else None


class ApplicationRecord:
    """The task's record in its state store; every call a no-op without one (Airflow before 3.3)."""

    def __init__(self, context: Any) -> None:
        self._store = context.get("task_state_store")
        self.clear_number = getattr(context.get("dag_run"), "clear_number", 0) or 0

    @property
    def kept(self) -> bool:
        return self._store is not None

    def earlier(self, tag: str) -> SubmittedApplication | None:
        """An earlier try's record of this clear of the run, for this task's tag."""
        if self._store is None:
            return None
        record = SubmittedApplication.from_json(self._store.get(KEY))
        if record is None or record.tag != tag or record.clear_number != self.clear_number:
            return None
        return record

    def save(self, record: SubmittedApplication) -> None:
        if self._store is not None:
            # kept for as long as a retry may come: the default retention could expire it under a long job
            self._store.set(KEY, record.to_json(), retention=NEVER_EXPIRE)
