"""The timeline as an SVG chart: one bar per instant from requested to completion time, coloured by action.

Server-rendered SVG, so the page needs no JavaScript or third-party assets inside Airflow's UI.
Pending instants run to `now`, hatched; rolled-back ones are dark red and struck through.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from html import escape

from hudi_ops.format.instant import Action
from hudi_ops.read.table_overview import COMPLETED, PENDING, ROLLED_BACK, InstantSpan

ACTION_COLOURS = {
    Action.COMMIT: "#1f77b4",
    Action.DELTA_COMMIT: "#17becf",
    Action.REPLACE_COMMIT: "#9467bd",
    Action.CLUSTERING: "#9467bd",
    Action.COMPACTION: "#ff7f0e",
    Action.LOG_COMPACTION: "#ff7f0e",
    Action.CLEAN: "#2ca02c",
    Action.ROLLBACK: "#d62728",
    Action.SAVEPOINT: "#8c564b",
    Action.RESTORE: "#8c564b",
}
OTHER_COLOUR = "#7f7f7f"
ROLLED_BACK_COLOUR = "#8b0000"  # darker than the rollback action's red, to tell them apart

LABEL_WIDTH = 400  # an instant, its action and the pipeline that wrote it
PLOT_WIDTH = 700
ROW = 24
BAR = 16
TOP = 40
RIGHT_MARGIN = 110  # room for the labels after the last bars
MIN_BAR = 4  # an instant that took less than a pixel still shows
PENDING_MIN_BAR = 12  # wide enough for its hatching to show


def colour(action: str) -> str:
    return ACTION_COLOURS.get(action, OTHER_COLOUR)


def timeline_svg(spans: Sequence[InstantSpan], *, now: datetime) -> str:
    if not spans:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="40" role="img">' \
               '<text x="8" y="24">No instants on the timeline yet.</text></svg>'
    ends = [_end(s, now) for s in spans]
    start = min(s.requested_at for s in spans)
    span_s = max((max(ends) - start).total_seconds(), 1.0)

    def x(t: datetime) -> float:
        return LABEL_WIDTH + (t - start).total_seconds() / span_s * PLOT_WIDTH

    rows = [_row(i, s, x(s.requested_at), x(end)) for i, (s, end) in enumerate(zip(spans, ends, strict=True))]
    height = TOP + ROW * len(spans) + 70
    width = LABEL_WIDTH + PLOT_WIDTH + RIGHT_MARGIN
    return "\n".join([
        # as wide as the page allows, up to its own size: the UI's iframe may be narrower
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width: {width}px" role="img" shape-rendering="crispEdges" font-family="sans-serif" '
        'font-size="12" class="hudi-timeline">',
        "<defs>",
        '<pattern id="pending" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">',
        '<rect width="4" height="8" fill="#ffffff"/></pattern>',
        "</defs>",
        *_axis(start, span_s, len(spans)),
        *rows,
        *_legend(spans, TOP + ROW * len(spans) + 30),
        "</svg>",
    ])


def _end(s: InstantSpan, now: datetime) -> datetime:
    if s.status == PENDING:
        return max(now, s.requested_at)
    if s.status == ROLLED_BACK:
        return s.rolled_back_at or s.requested_at
    return s.completed_at or s.requested_at


def _row(i: int, s: InstantSpan, x0: float, x1: float) -> str:
    y = TOP + i * ROW
    w = max(x1 - x0, MIN_BAR)
    fill = colour(s.action)
    label = f"{s.requested_time} {s.action}" + (f" · {s.pipeline}" if s.pipeline else "")
    title = escape(f"{s.action} {s.requested_time}{f' by {s.pipeline}' if s.pipeline else ''}: {_describe(s)}")
    parts = [f'<g class="instant {s.status.replace(" ", "-")}"><title>{title}</title>',
             f'<text x="6" y="{y + BAR - 3}">{escape(label)}</text>']
    if s.status == COMPLETED:
        parts.append(f'<rect x="{x0:.1f}" y="{y}" width="{w:.1f}" height="{BAR}" fill="{fill}"/>')
    elif s.status == PENDING:
        w = max(w, PENDING_MIN_BAR)
        parts += [
            f'<rect x="{x0:.1f}" y="{y}" width="{w:.1f}" height="{BAR}" fill="{fill}"/>',
            f'<rect x="{x0:.1f}" y="{y}" width="{w:.1f}" height="{BAR}" fill="url(#pending)"/>',
            f'<text x="{x0 + w + 4:.1f}" y="{y + BAR - 3}" fill="#333">{escape(s.state)}</text>',
        ]
    else:
        parts += [
            f'<rect x="{x0:.1f}" y="{y}" width="{w:.1f}" height="{BAR}" fill="{ROLLED_BACK_COLOUR}"/>',
            _strike(x0, y, w),
            f'<text x="{x0 + w + 4:.1f}" y="{y + BAR - 3}" fill="{ROLLED_BACK_COLOUR}">rolled back</text>',
        ]
    parts.append("</g>")
    return "".join(parts)


def _strike(x: float, y: float, w: float) -> str:
    mid = y + BAR / 2
    return f'<line x1="{x:.1f}" y1="{mid}" x2="{x + w:.1f}" y2="{mid}" stroke="#ffffff" stroke-width="2"/>'


def _describe(s: InstantSpan) -> str:
    if s.status == PENDING:
        return f"pending ({s.state})"
    if s.status == ROLLED_BACK:
        return f"rolled back by {s.rolled_back_by}"
    return f"completed {s.completion_time}" if s.completion_time else "completed (time not recorded)"


def _axis(start: datetime, span_s: float, n: int) -> list[str]:
    bottom = TOP + ROW * n
    out = [f'<line x1="{LABEL_WIDTH}" y1="{TOP - 6}" x2="{LABEL_WIDTH + PLOT_WIDTH}" y2="{TOP - 6}" stroke="#999"/>']
    for k in range(6):
        t = start + timedelta(seconds=span_s * k / 5)
        xk = LABEL_WIDTH + PLOT_WIDTH * k / 5
        if span_s >= 86_400:  # a long-pending instant can stretch the axis over days
            label = f"{t:%m-%d %H:%M}"
        else:
            label = f"{t:%H:%M:%S}" if span_s >= 10 else f"{t:%H:%M:%S}.{t.microsecond // 1000:03d}"
        out += [
            f'<line x1="{xk:.1f}" y1="{TOP - 10}" x2="{xk:.1f}" y2="{bottom}" stroke="#e5e5e5"/>',
            f'<text x="{xk:.1f}" y="{TOP - 14}" text-anchor="middle" fill="#555">{label}</text>',
        ]
    out.append(f'<text x="6" y="{TOP - 14}" fill="#555">{start:%Y-%m-%d} (UTC)</text>')
    return out


def _legend(spans: Sequence[InstantSpan], y: int) -> list[str]:
    entries = sorted({s.action for s in spans})
    out, xk = [], LABEL_WIDTH
    for action in entries:
        out += [f'<rect x="{xk}" y="{y}" width="14" height="14" fill="{colour(action)}"/>',
                f'<text x="{xk + 18}" y="{y + 12}">{escape(action)}</text>']
        xk += 30 + 8 * len(action)
    if any(s.status == PENDING for s in spans):
        out += [f'<rect x="{xk}" y="{y}" width="14" height="14" fill="{OTHER_COLOUR}"/>',
                f'<rect x="{xk}" y="{y}" width="14" height="14" fill="url(#pending)"/>',
                f'<text x="{xk + 18}" y="{y + 12}">pending</text>']
        xk += 90
    if any(s.status == ROLLED_BACK for s in spans):
        out += [f'<rect x="{xk}" y="{y}" width="14" height="14" fill="{ROLLED_BACK_COLOUR}"/>',
                _strike(xk, y - 1, 14), f'<text x="{xk + 18}" y="{y + 12}">rolled back</text>']
    return out
