"""The "Hudi tables" view: per table of the tables config, its timeline chart, latest commits, file
groups and table services (pending plans with their file groups, cleans, savepoints, and the slices
the next clean removes under the table's cleaner settings).

A FastAPI app that Airflow's api-server mounts (through hudi_ops.airflow.ui.plugin). Every route needs
an Airflow login: a Bearer token or the UI's session cookie, so the page works inside the UI's iframe.
A table is shown to users who may read one of its DAGs (`hudi_ingest__<t>`, `hudi_backfill__<t>`):
a page opened without a login sends the browser to Airflow's sign-in and back (the JSON API answers
401), 403 without that permission. The index is the fleet page (hudi_ops.airflow.ui.fleet_view).
"""

from __future__ import annotations

from dataclasses import asdict, astuple
from datetime import UTC, datetime
from html import escape

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import DagDetails
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from hudi_ops.airflow.dag_factory.factory import backfill_dag_id, ingest_dag_id, table_of_dag
from hudi_ops.airflow.dag_factory.freshness import late
from hudi_ops.airflow.dag_factory.tables_config import read_tables_config, tables_config_path
from hudi_ops.airflow.hooks.aws import table_s3
from hudi_ops.airflow.ui.fleet_view import SORTS, fleet_page, fleet_rows
from hudi_ops.airflow.ui.lock_line import table_lock_state
from hudi_ops.airflow.ui.timeline_chart import timeline_svg
from hudi_ops.airflow.ui.view_model import TableEntry, table_entries
from hudi_ops.errors import HudiOpsError, TableBeingCreatedError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.locks.lock_state import LockState
from hudi_ops.read.table_need import latest_ingest
from hudi_ops.read.table_overview import InstantSpan, TableOverview

URL_PREFIX = "/hudi-ops"
CHART_INSTANTS = 60  # the chart shows the latest instants; older ones are in the JSON

_STYLE = """
body { font-family: sans-serif; margin: 16px; color: #222; }
table { border-collapse: collapse; margin: 8px 0 24px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; white-space: nowrap; }
.meta { color: #555; } .error { color: #b00020; } .empty { color: #555; font-style: italic; }
td.late, .late { color: #b00020; font-weight: bold; } th a { color: inherit; text-decoration: none; }
"""


def _tables() -> dict[str, TableEntry]:
    from airflow.configuration import conf

    path = tables_config_path(conf.get("core", "dags_folder"))
    return table_entries(read_tables_config(path), origin=str(path))


def _may_read(user: object, table: str) -> bool:
    manager = get_auth_manager()
    return any(manager.is_authorized_dag(method="GET", user=user, details=DagDetails(id=dag_id))
               for dag_id in (ingest_dag_id(table), backfill_dag_id(table)))


def _entry(user: object, name: str) -> TableEntry:
    try:
        tables = _tables()
    except HudiOpsError as e:
        raise HTTPException(422, str(e)) from e
    if name not in tables:
        raise HTTPException(404, f"no table {name!r} in the tables config; known: {', '.join(sorted(tables))}")
    if not _may_read(user, name):
        raise HTTPException(403, f"reading table {name!r} needs read access to its DAGs")
    return tables[name]


def _readable(user: object) -> dict[str, TableEntry]:
    """The tables of the config `user` may read."""
    try:
        return {n: e for n, e in _tables().items() if _may_read(user, n)}
    except HudiOpsError as e:
        raise HTTPException(422, str(e)) from e


def _freshness(entry: TableEntry, now: datetime) -> str:
    """The table page's freshness line (its latest ingest read from the timeline alone: the page's overview
    has built the file-system view already)."""
    if not entry.ingests:
        return ""
    try:
        latest = latest_ingest(MetaClient.open(entry.base_path, s3=table_s3(entry.aws_conn_id)))
    except HudiOpsError as e:
        return f"<p class='error'>freshness: {escape(str(e))}</p>"
    return freshness_line(latest, entry.freshness, now)


def not_created_yet(entry: TableEntry) -> str:
    """The page of a table that its writers have not created yet."""
    return (f"<p class='empty'>No commits yet: {escape(entry.base_path)} becomes a Hudi table with its first "
            f"write, by its ingest ({escape(ingest_dag_id(entry.name))}, once a file lands in its source folder) "
            f"or backfill DAG ({escape(backfill_dag_id(entry.name))}), whichever it has. Its timeline, file "
            "groups and latest commits show here from then on.</p>")


def _overview(entry: TableEntry) -> TableOverview:
    return TableOverview.load(entry.base_path, clean_options=entry.clean_conf, s3=table_s3(entry.aws_conn_id))


def _page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
                        f"<style>{_STYLE}</style></head><body>{body}</body></html>")


def _grid(headers: list[str], rows: list[tuple[object, ...]], text_columns: int) -> str:
    def cell(tag: str, i: int, value: object) -> str:
        cls = ' class="text"' if i < text_columns else ""
        return f"<{tag}{cls}>{escape('' if value is None else str(value))}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def freshness_line(latest: datetime | None, goal_minutes: float | None, now: datetime) -> str:
    """The table's lag since its latest ingest (`latest`), against its goal."""
    if latest is None:
        return "<p class='meta'>freshness: no ingest commit on the active timeline yet</p>"
    lag = now - latest
    minutes = lag.total_seconds() / 60
    if goal_minutes is None:
        return f"<p class='meta'>freshness: latest ingest {minutes:.1f} min ago (no goal set)</p>"
    verdict = "<span class='late'>late</span>" if late(lag, goal_minutes) else "on time"
    return (f"<p class='meta'>freshness: latest ingest {minutes:.1f} min ago, goal {goal_minutes:g} min: "
            f"{verdict}</p>")


def table_page(overview: TableOverview, lock: LockState, *, now: datetime, freshness: str = "") -> str:
    commits = _grid(
        ["requested", "completed", "action", "operation", "pipeline", "files", "records written", "inserts",
         "updates", "deletes", "bytes", "partitions"],
        [astuple(c) for c in overview.latest_commits], text_columns=5,
    )
    groups = _grid(["partition", "file id", "slices", "base instant", "base file", "log files", "bytes"],
                   [astuple(g) for g in overview.file_groups], text_columns=2)
    shown = overview.instants[-CHART_INSTANTS:]
    return (
        _header(overview, lock, shown, now, freshness)
        + f"<h3>Latest commits</h3>{commits}<h3>File groups</h3>{groups}"
        + _services(overview)
    )


def _header(overview: TableOverview, lock: LockState, shown: tuple[InstantSpan, ...], now: datetime,
            freshness: str) -> str:
    return (
        f"<h2>{escape(overview.name)}</h2>"
        f"<p class='meta'>{escape(overview.base_path)} · {escape(overview.table_type)} · "
        f"table version {overview.table_version} · {len(overview.instants)} instants · "
        f"{len(overview.file_groups)} file groups</p><p class='meta'>{escape(lock.describe())}</p>{freshness}"
        f"<h3>Timeline{f' (the latest {len(shown)})' if len(shown) < len(overview.instants) else ''}</h3>"
        f"{timeline_svg(shown, now=now)}"
    )


def _services(overview: TableOverview) -> str:
    plans = _grid(["service", "instant", "state", "file groups"],
                  [(p.service, p.instant, p.state, _listed(p.file_groups)) for p in overview.pending_plans],
                  text_columns=4)
    cleans = _grid(["instant", "completed", "policy", "files removed", "bytes removed", "earliest commit retained"],
                   [(c.instant, c.completed, c.policy, c.files, c.bytes, c.earliest_commit_to_retain)
                    for c in reversed(overview.cleans)], text_columns=3)
    savepoints = _grid(["instant", "by", "comments", "files kept"],
                       [(s.instant, s.by, s.comments, s.files) for s in overview.savepoints], text_columns=3)
    nxt = overview.next_clean
    slices = _grid(["partition", "file id", "base instant", "files", "bytes", "why"],
                   [(s.partition, s.file_id, s.base_instant, len(s.files), s.bytes, s.why) for s in nxt.slices],
                   text_columns=3)
    return (
        f"<h3>Pending plans</h3>{plans if overview.pending_plans else _none('no compaction or clustering plan')}"
        f"<h3>Cleans</h3>{cleans if overview.cleans else _none('no clean on the active timeline')}"
        f"<h3>Savepoints</h3>{savepoints if overview.savepoints else _none('no savepoint')}"
        f"<h3>Next clean</h3><p class='meta'>{escape(nxt.policy)} · earliest commit to retain "
        f"{escape(nxt.earliest_commit_to_retain or '-')} · removes {len(nxt.slices)} slice(s), "
        f"{len(nxt.files)} file(s), {nxt.bytes} bytes</p>{slices if nxt.slices else ''}"
    )


def _listed(items: tuple[object, ...], shown: int = 4) -> str:
    names = [str(i) for i in items]
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _none(what: str) -> str:
    return f"<p class='meta'>{escape(what)}</p>"


def create_app() -> FastAPI:
    # no /docs or /openapi.json: FastAPI serves them outside the app's routes, so without a login
    app = FastAPI(title="hudi-ops tables", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(StarletteHTTPException)
    async def sign_in_first(request: Request, error: StarletteHTTPException) -> Response:
        """A page opened without a login: to Airflow's sign-in, which comes back to it (the API: 401)."""
        # the path within this app, whatever Airflow's base URL and this app's mount put before it
        path = request.url.path.removeprefix(request.scope.get("root_path", ""))
        if error.status_code == 401 and not path.startswith("/api/"):
            return RedirectResponse(get_auth_manager().get_url_login(next_url=str(request.url)), status_code=303)
        return await http_exception_handler(request, error)

    @app.get("/", response_class=HTMLResponse)
    def index(user: GetUserDep, dag_id: str | None = None, sort: str = "table", order: str = "asc") -> HTMLResponse:
        table = table_of_dag(dag_id) if dag_id else None
        if table is not None:  # opened from a DAG's tab: that DAG's table
            return tables_page(table, user)
        try:
            tables = _readable(user)
        except HTTPException as e:
            return _page("Hudi tables", f"<h2>Hudi tables</h2><p class='error'>{escape(str(e.detail))}</p>")
        rows = fleet_rows(tables, now=datetime.now(UTC))
        return _page("Hudi tables", fleet_page(rows, prefix=URL_PREFIX, sort=sort if sort in SORTS else "table",
                                               descending=order == "desc"))

    @app.get("/api/fleet")
    def api_fleet(user: GetUserDep) -> list[dict[str, object]]:
        return [r.to_dict() for r in fleet_rows(_readable(user), now=datetime.now(UTC))]

    @app.get("/tables/{name}", response_class=HTMLResponse)
    def tables_page(name: str, user: GetUserDep) -> HTMLResponse:
        entry = _entry(user, name)
        try:
            overview = _overview(entry)
        except TableBeingCreatedError as e:  # a creation at work, or one that died: its message says which fix
            return _page(name, f"<h2>{escape(name)}</h2><p class='error'>{escape(str(e))}</p>")
        except TableNotFoundError:  # configured, not written yet: how it will be, not an error
            return _page(name, f"<h2>{escape(name)}</h2>" + not_created_yet(entry))
        except HudiOpsError as e:
            return _page(name, f"<h2>{escape(name)}</h2><p class='error'>{escape(str(e))}</p>")
        lock = table_lock_state(name, entry.zookeeper_conn_id)
        now = datetime.now(UTC)
        freshness = _freshness(entry, now)
        return _page(f"{name}: Hudi timeline", table_page(overview, lock, now=now, freshness=freshness))

    @app.get("/api/tables")
    def api_tables(user: GetUserDep) -> dict[str, str]:
        return {n: e.base_path for n, e in _readable(user).items()}

    @app.get("/api/tables/{name}")
    def api_table(name: str, user: GetUserDep) -> dict[str, object]:
        entry = _entry(user, name)
        try:
            overview = _overview(entry).to_dict()
        except HudiOpsError as e:
            raise HTTPException(422, str(e)) from e
        return {**overview, "lock": asdict(table_lock_state(name, entry.zookeeper_conn_id))}

    return app


def plugin_entries() -> dict[str, list[dict[str, object]]]:
    """The AirflowPlugin attributes: the app, a "Hudi tables" entry under Browse and a tab on every DAG."""
    return {
        "fastapi_apps": [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "hudi-ops tables"}],
        "external_views": [
            {"name": "Hudi tables", "href": f"{URL_PREFIX}/", "url_route": "hudi-tables",
             "destination": "nav", "category": "browse"},
            {"name": "Hudi timeline", "href": f"{URL_PREFIX}/?dag_id={{DAG_ID}}", "url_route": "hudi-timeline",
             "destination": "dag"},
        ],
    }
