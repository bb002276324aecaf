"""The record a try keeps of its YARN application (hudi_ops.airflow.operators.resumable): which record a retry takes up.
What a retry then does with the application runs on a real YARN under a real Airflow (test_resumable_yarn.py)."""

from __future__ import annotations

import types

from hudi_ops.airflow.operators.resumable import KEY, ApplicationRecord, SubmittedApplication


class Store:
    """The task state store's interface (Airflow 3.3: get, set with a retention), over a dict."""

    def __init__(self) -> None:
        self.values: dict[str, object] = {}
        self.retention: object = None

    def get(self, key, default=None):
        return self.values.get(key, default)

    def set(self, key, value, *, retention=None):
        self.values[key], self.retention = value, retention


def context(store, clear_number=0):
    return {"task_state_store": store, "dag_run": types.SimpleNamespace(clear_number=clear_number)}


def test_a_retry_of_the_same_clear_of_the_run_takes_up_the_record_its_try_kept():
    import airflow.sdk

    store = Store()
    submitted = SubmittedApplication("hudi-ops-a", "file:///t/.hudi-ops/results/1.json", 0, ("application_1_1",))
    ApplicationRecord(context(store)).save(submitted)
    ApplicationRecord(context(store)).save(SubmittedApplication(**{**submitted.__dict__,
                                                                   "application_id": "application_1_2"}))
    # a long job's record outlives the store's default retention (Airflow 3.3 has the store and the constant)
    assert store.retention is getattr(airflow.sdk, "NEVER_EXPIRE", None)
    taken = ApplicationRecord(context(store)).earlier("hudi-ops-a")
    assert taken is not None and taken.application_id == "application_1_2" and taken.known == ("application_1_1",)
    assert taken.result_uri == "file:///t/.hudi-ops/results/1.json"


def test_a_cleared_run_another_tasks_tag_or_a_damaged_value_is_not_taken_up():
    store = Store()
    ApplicationRecord(context(store, clear_number=1)).save(SubmittedApplication("hudi-ops-a", "r", 1))
    assert ApplicationRecord(context(store, clear_number=2)).earlier("hudi-ops-a") is None  # cleared again since
    assert ApplicationRecord(context(store, clear_number=1)).earlier("hudi-ops-b") is None
    assert ApplicationRecord(context(store, clear_number=1)).earlier("hudi-ops-a") is not None
    for damaged in ({"tag": "hudi-ops-a"}, "text", [1], {**store.values[KEY], "clear_number": "x"},
                    {**store.values[KEY], "known": "application_1_1"}):
        store.values[KEY] = damaged
        assert ApplicationRecord(context(store, clear_number=1)).earlier("hudi-ops-a") is None


def test_without_a_task_state_store_nothing_is_kept_or_taken_up():
    record = ApplicationRecord({"dag_run": None})
    record.save(SubmittedApplication("hudi-ops-a", "r", 0))
    assert not record.kept and record.earlier("hudi-ops-a") is None and record.clear_number == 0
