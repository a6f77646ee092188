"""The faithfulness page's chart: per generator model, three estimates of one measure with their 95 % intervals.

Server-rendered SVG like annotator/reports/charts.py (no JavaScript, no CDN); every text goes through
``escape``. The page shows the same numbers in a table and a CSV.
"""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import mark_safe

from annotator.reports.charts import nice_ticks

# (key of the figure, key of its interval, legend, colour): the pre-labeler grey, gold orange, corrected blue.
ESTIMATES = (
    ("auto", None, "pre-labeler (auto)", "#757575"),
    ("gold_only", "gold_only_ci95", "gold only", "#e07b00"),
    ("corrected", "corrected_ci95", "corrected (PPI++)", "#1f5fbf"),
)


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def interval_chart(title: str, groups: list[tuple[str, dict]], *, width: int = 560, height: int = 230):
    """``groups``: (name, the measure's figures as in the report) per model; a missing figure leaves a gap."""
    left, right, top, bottom = 48, 10, 26, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    highest = [0.05]
    for _, figures in groups:
        for key, interval_key, _, _ in ESTIMATES:
            if figures[key] is not None:
                highest.append(figures[interval_key][1] if interval_key and figures[interval_key] else figures[key])
    ticks = nice_ticks(0.0, min(1.0, max(highest)), 5)
    span = ticks[-1] or 1.0

    def y(value):
        return top + plot_h * (1 - value / span)

    parts = []
    for value in ticks:
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}"/>')
        parts.append(f'<text x="{left - 4}" y="{y(value) + 4:.1f}" text-anchor="end">{_percent(value)}</text>')
    for n, (_, _, legend, colour) in enumerate(ESTIMATES):
        x = left + n * 150
        parts.append(f'<circle cx="{x + 5}" cy="10" r="4" fill="{colour}"/>'
                     f'<text x="{x + 13}" y="14">{escape(legend)}</text>')
    group_w = plot_w / max(len(groups), 1)
    for i, (name, figures) in enumerate(groups):
        for j, (key, interval_key, legend, colour) in enumerate(ESTIMATES):
            value = figures[key]
            if value is None:
                continue
            x = left + group_w * i + group_w * (j + 1) / (len(ESTIMATES) + 1)
            interval = figures[interval_key] if interval_key else None
            tip = f"{name} · {legend}: {_percent(value)}"
            if interval:
                tip += f" (95 % interval {_percent(interval[0])} to {_percent(interval[1])})"
                parts.append(
                    f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y(interval[0]):.1f}" y2="{y(interval[1]):.1f}" '
                    f'stroke="{colour}" stroke-width="2"/>'
                    f'<line x1="{x - 5:.1f}" x2="{x + 5:.1f}" y1="{y(interval[0]):.1f}" y2="{y(interval[0]):.1f}" stroke="{colour}"/>'
                    f'<line x1="{x - 5:.1f}" x2="{x + 5:.1f}" y1="{y(interval[1]):.1f}" y2="{y(interval[1]):.1f}" stroke="{colour}"/>'
                )
            elif interval_key:
                tip += " (no interval: too few drawn turns)"
            parts.append(f'<circle cx="{x:.1f}" cy="{y(value):.1f}" r="4" fill="{colour}"><title>{escape(tip)}</title></circle>')
        label = name if len(name) <= 18 else name[:17] + "…"
        parts.append(f'<text x="{left + group_w * (i + 0.5):.1f}" y="{height - bottom + 16}" text-anchor="middle">'
                     f'{escape(label)}</text>')
    parts.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{y(0):.1f}" y2="{y(0):.1f}"/>')
    return mark_safe(
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{"".join(parts)}</svg>'
    )
