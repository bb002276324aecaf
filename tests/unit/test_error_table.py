"""Hudi's error table as an ingest's options turn it on (hoodie.errortable.*)."""

from __future__ import annotations

import pytest

from hudi_ops.errors import ConfigError
from hudi_ops.sources.error_table import ErrorTable, error_table


def test_the_error_table_is_off_by_default_and_on_needs_its_base_path():
    assert error_table({}, "trips") is None
    assert error_table({"hoodie.errortable.enable": "false"}, "trips") is None
    on = {"hoodie.errortable.enable": "true"}
    with pytest.raises(ConfigError, match=r"hoodie\.errortable\.base\.path"):
        error_table(on, "trips")
    assert error_table({**on, "hoodie.errortable.base.path": "/lake/errors/"}, "trips") == ErrorTable(
        "/lake/errors", "trips_errors")
    named = error_table({**on, "hoodie.errortable.base.path": "/e", "hoodie.errortable.target.table.name": "bad"}, "t")
    assert named.name == "bad"
    shared = named.write_options({"hoodie.write.lock.provider": "zk", "hoodie.datasource.write.recordkey.field": "id",
                                  "hoodie.write.concurrency.mode": "optimistic_concurrency_control"})
    assert shared == {"hoodie.write.lock.provider": "zk",
                      "hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
