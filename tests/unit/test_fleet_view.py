"""The fleet page's order and marks, on rows as the page builds them."""

from __future__ import annotations

import datetime as dt

from hudi_ops.airflow.dag_factory.freshness import late
from hudi_ops.airflow.ui.fleet_view import FleetRow, fleet_page, sorted_rows

ROWS = [FleetRow("a", "/a", lag_s=30.0, goal_min=1, late=False, failed_writes=0),
        FleetRow("b", "/b", lag_s=900.0, goal_min=10, late=True, failed_writes=2),
        FleetRow("c", "/c", note="no commits yet"),
        FleetRow("d", "/d", lag_s=5.0, failed_writes=1)]


def test_a_sort_puts_tables_without_the_value_last_whichever_the_order():
    assert [r.table for r in sorted_rows(ROWS, "lag", descending=True)] == ["b", "a", "d", "c"]
    assert [r.table for r in sorted_rows(ROWS, "lag", descending=False)] == ["d", "a", "b", "c"]
    assert [r.table for r in sorted_rows(ROWS, "failed", descending=True)] == ["b", "d", "a", "c"]
    assert [r.table for r in sorted_rows(ROWS, "no such column", descending=False)] == ["a", "b", "c", "d"]


def test_the_page_marks_the_late_table_links_each_to_its_timeline_and_says_why_a_row_is_empty():
    html = fleet_page(ROWS, prefix="/hudi-ops", sort="lag", descending=True)
    assert "4 table(s), 1 late against its freshness goal" in html
    assert html.count("<td class='late'>late</td>") == 1 and html.count("on time") == 1
    assert all(f"<a href='/hudi-ops/tables/{t}'>{t}</a>" in html for t in "abcd")
    assert "no commits yet" in html and html.index("data-table='b'") < html.index("data-table='a'")
    assert "href='/hudi-ops/?sort=lag&amp;order=asc'>freshness lag ▼" in html  # the sorted column flips


def test_a_table_is_late_once_its_latest_ingest_is_older_than_its_goal():
    assert late(dt.timedelta(minutes=11), 10) is True and late(dt.timedelta(minutes=9), 10) is False
    assert late(None, 10) is None and late(dt.timedelta(hours=5), None) is None
