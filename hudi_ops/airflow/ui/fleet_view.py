"""The fleet page: every table of the tables config in a row, sortable by any column, each linking to its
timeline page. What an operator of many pipelines scans for: which table is late against its freshness
goal (and whose ingest runs missed their deadline), when each last committed and by which pipeline, the
writes that failed in the last day (conflicts and killed attempts), what a read merges (log files per
slice) and which services wait (pending plans, the oldest one's age, pending cleans).

Tables are read concurrently, without a JVM (hudi_ops.read.table_status); a table that cannot be read
shows why in its row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from html import escape
from urllib.parse import quote

from hudi_ops.airflow.dag_factory.factory import ingest_dag_id
from hudi_ops.airflow.dag_factory.freshness import late
from hudi_ops.airflow.hooks.aws import table_s3
from hudi_ops.airflow.ui.view_model import TableEntry
from hudi_ops.errors import TableNotFoundError
from hudi_ops.read.table_status import RECENT, TableStatus


@dataclass(frozen=True)
class FleetRow:
    table: str
    base_path: str
    lag_s: float | None = None  # since its latest ingest
    goal_min: float | None = None
    late: bool | None = None
    missed_deadlines: int | None = None  # its ingest runs' missed deadlines in the last day; None: not asked
    last_commit: str | None = None  # ISO time, UTC
    last_commit_by: str | None = None
    failed_writes: int | None = None
    log_files_p50: float | None = None
    log_files_p99: float | None = None
    pending_plans: int | None = None
    oldest_plan_age_s: float | None = None
    pending_cleans: int | None = None
    note: str | None = None  # why the table could not be read, or that it has no commit yet

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


#: the page's columns: (key, header, sort key); a row without a value sorts last whichever the order
COLUMNS = (
    ("table", "table", lambda r: r.table),
    ("lag", "freshness lag", lambda r: r.lag_s),
    ("goal", "goal (min)", lambda r: r.goal_min),
    ("late", "late", lambda r: r.late),
    ("missed", "missed deadlines (1 day)", lambda r: r.missed_deadlines),
    ("last_commit", "last commit", lambda r: r.last_commit),
    ("by", "by", lambda r: r.last_commit_by),
    ("failed", "failed writes (1 day)", lambda r: r.failed_writes),
    ("log_p50", "log files / slice p50", lambda r: r.log_files_p50),
    ("log_p99", "p99", lambda r: r.log_files_p99),
    ("plans", "pending plans", lambda r: r.pending_plans),
    ("plan_age", "oldest plan age", lambda r: r.oldest_plan_age_s),
    ("cleans", "pending cleans", lambda r: r.pending_cleans),
)
SORTS = {key: by for key, _, by in COLUMNS}


def fleet_rows(entries: Mapping[str, TableEntry], *, now: dt.datetime, workers: int = 16) -> list[FleetRow]:
    missed = missed_deadlines([ingest_dag_id(name) for name, e in entries.items() if e.ingests], since=now - RECENT)

    def row(entry: TableEntry) -> FleetRow:
        base = FleetRow(entry.name, entry.base_path, goal_min=entry.freshness,
                        missed_deadlines=missed.get(ingest_dag_id(entry.name)) if entry.ingests else None)
        try:
            status = TableStatus.load(entry.base_path, entry.clean_conf, now=now, s3=table_s3(entry.aws_conn_id))
        except TableNotFoundError:
            return replace(base, note="no commits yet")
        except Exception as e:  # one table's error is its row's, never the page's
            return replace(base, note=f"{type(e).__name__}: {e}")
        need = status.need
        lag = now - need.latest_ingest if need.latest_ingest is not None else None
        return replace(
            base, lag_s=round(lag.total_seconds(), 1) if lag is not None else None, late=late(lag, entry.freshness),
            last_commit=status.last_commit.isoformat(timespec="seconds") if status.last_commit else None,
            last_commit_by=status.last_commit_by, failed_writes=status.failed_writes,
            log_files_p50=need.log_files_percentile(50), log_files_p99=need.log_files_percentile(99),
            pending_plans=need.pending_plans,
            oldest_plan_age_s=round((now - need.oldest_pending_plan).total_seconds(), 1)
            if need.oldest_pending_plan else None,
            pending_cleans=status.pending_cleans)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fleet") as pool:
        return list(pool.map(row, entries.values()))


def missed_deadlines(dag_ids: Iterable[str], *, since: dt.datetime) -> dict[str, int]:
    """Per DAG, the deadlines Airflow's scheduler marked missed since `since`; asked of Airflow's database
    (the page runs in its api-server). Empty when it cannot be asked: the page still shows the lag."""
    wanted = list(dag_ids)
    if not wanted:
        return {}
    try:
        from airflow.models.dagrun import DagRun
        from airflow.models.deadline import Deadline
        from airflow.utils.session import create_session
        from sqlalchemy import func, select

        with create_session() as session:
            found = session.execute(
                select(DagRun.dag_id, func.count()).join(Deadline, Deadline.dagrun_id == DagRun.id)
                .where(DagRun.dag_id.in_(wanted), Deadline.missed, Deadline.deadline_time >= since)
                .group_by(DagRun.dag_id)).all()
    except Exception:  # an Airflow without deadlines, or its database out of reach
        return {}
    return {**dict.fromkeys(wanted, 0), **{dag_id: int(n) for dag_id, n in found}}


def sorted_rows(rows: list[FleetRow], sort: str, descending: bool) -> list[FleetRow]:
    by = SORTS.get(sort, SORTS["table"])
    known = sorted((r for r in rows if by(r) is not None), key=by, reverse=descending)  # type: ignore[arg-type,return-value]
    return known + [r for r in rows if by(r) is None]


def fleet_page(rows: list[FleetRow], *, prefix: str, sort: str = "table", descending: bool = False) -> str:
    def header(key: str, title: str) -> str:
        flip = descending if key == sort else key in ("lag", "late", "missed", "failed", "log_p99", "plan_age")
        arrow = (" ▼" if descending else " ▲") if key == sort else ""
        return (f"<th class='{'text' if key in ('table', 'by') else ''}'><a href='{prefix}/?sort={key}&amp;order="
                f"{'asc' if flip else 'desc'}'>{escape(title)}{arrow}</a></th>")

    body = "".join(_row(r, prefix) for r in sorted_rows(rows, sort, descending))
    late_now = sum(1 for r in rows if r.late)
    return (f"<h2>Hudi tables</h2><p class='meta'>{len(rows)} table(s), {late_now} late against its freshness goal"
            f"</p><table class='fleet'><tr>{''.join(header(k, t) for k, t, _ in COLUMNS)}</tr>{body}</table>")


def _row(r: FleetRow, prefix: str) -> str:
    def cell(value: object, text: bool = False, cls: str = "") -> str:
        classes = " ".join(filter(None, ["text" if text else "", cls]))
        return f"<td class='{classes}'>{escape('' if value is None else str(value))}</td>"

    link = f"<td class='text'><a href='{prefix}/tables/{quote(r.table)}'>{escape(r.table)}</a></td>"
    if r.note:
        return (f"<tr data-table='{escape(r.table)}'>{link}<td colspan='{len(COLUMNS) - 1}' class='text meta'>"
                f"{escape(r.note)}</td></tr>")
    status = "late" if r.late else "on time" if r.late is False else ""
    return (f"<tr data-table='{escape(r.table)}'>{link}{cell(_duration(r.lag_s))}{cell(r.goal_min)}"
            f"{cell(status, cls='late' if r.late else '')}{cell(r.missed_deadlines)}{cell(r.last_commit, True)}"
            f"{cell(r.last_commit_by, True)}{cell(r.failed_writes)}{cell(r.log_files_p50)}{cell(r.log_files_p99)}"
            f"{cell(r.pending_plans)}{cell(_duration(r.oldest_plan_age_s))}{cell(r.pending_cleans)}</tr>")


def _duration(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    minutes, s = divmod(int(seconds), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}h{m:02d}m" if hours else f"{m}m{s:02d}s"
