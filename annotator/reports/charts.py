"""Server-rendered SVG charts: no JavaScript library, no CDN.

Each function returns SVG markup marked safe; every piece of text in it goes
through ``escape`` first. The reports page shows the same numbers as a table
and a CSV next to each chart.
"""

from __future__ import annotations

import math

from django.utils.html import escape
from django.utils.safestring import mark_safe

PALETTE = ["#1f5fbf", "#e07b00", "#2e7d32", "#ad1457", "#6a1b9a", "#00838f", "#5d4037"]


def _fmt(value, percent):
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" if percent else f"{value:.3f}"


def nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """About ``count`` axis ticks at round values (a step of 1, 2, 2.5 or 5 times a power of ten) covering
    ``low``..``high``: an axis reads -20 %, 0 %, 20 %, not -6.2 %, 20.3 %, 46.9 %."""
    span = (high - low) or 1.0
    raw = span / max(count - 1, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    start, end = math.floor(low / step + 1e-9) * step, math.ceil(high / step - 1e-9) * step
    ticks, n = [], 0
    while start + n * step <= end + step * 1e-6:
        ticks.append(round(start + n * step, 10))
        n += 1
    return ticks if len(ticks) > 1 else [low, low + step]


def _svg(width, height, title, body):
    return mark_safe(
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{body}</svg>'
    )


def _y_axis(low, high, top, plot_h, left, right_x, percent):
    """The value scale of a chart (round ticks covering ``low``..``high``): ``y(value)`` and its grid and labels."""
    ticks = nice_ticks(low, high)
    low, span = ticks[0], (ticks[-1] - ticks[0]) or 1.0

    def y(value):
        return top + plot_h * (1 - (value - low) / span)

    parts = []
    for value in ticks:
        parts.append(f'<line class="grid" x1="{left}" x2="{right_x}" y1="{y(value):.1f}" y2="{y(value):.1f}"/>')
        parts.append(f'<text x="{left - 4}" y="{y(value) + 4:.1f}" text-anchor="end">{escape(_fmt(value, percent))}</text>')
    return y, ticks[0], parts


def bar_chart(title, categories, series, *, percent=True, y_min=0.0, y_max=None, width=560, height=240):
    """Grouped vertical bars. ``series`` is a list of (name, values, colour); None values leave a gap."""
    left, right, top, bottom = 48, 10, 10, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, vs, _ in series for v in vs if v is not None]
    if y_max is None:
        y_max = max(values + [1.0 if percent else 0.0]) or 1.0
    if y_min is None:
        y_min = min(values + [0.0])
    y, y_min, parts = _y_axis(y_min, y_max, top, plot_h, left, width - right, percent)
    group_w = plot_w / max(len(categories), 1)
    bar_w = max(2.0, (group_w * 0.8) / max(len(series), 1))
    zero = y(max(y_min, 0.0)) if y_min < 0 else y(y_min)
    for i, category in enumerate(categories):
        gx = left + group_w * i + group_w * 0.1
        for j, (name, vals, colour) in enumerate(series):
            value = vals[i]
            if value is None:
                continue
            x = gx + bar_w * j
            y_top, y_bottom = sorted((y(value), zero))
            tip = f"{category} · {name}: {_fmt(value, percent)}"
            parts.append(
                f'<rect x="{x:.1f}" y="{y_top:.1f}" width="{bar_w - 1:.1f}" height="{max(y_bottom - y_top, 0.5):.1f}" '
                f'fill="{colour}"><title>{escape(tip)}</title></rect>'
            )
        label = str(category)
        label = label if len(label) <= 16 else label[:15] + "…"
        parts.append(
            f'<text x="{left + group_w * (i + 0.5):.1f}" y="{height - bottom + 14}" text-anchor="middle">{escape(label)}</text>'
        )
    parts.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{zero:.1f}" y2="{zero:.1f}"/>')
    return _svg(width, height, title, "".join(parts))


def line_chart(title, x_labels, series, *, percent=False, y_min=None, y_max=1.0, width=560, height=240):
    """Lines over ordered categories (e.g. weeks). ``series``: (name, values, colour); None breaks a line."""
    left, right, top, bottom = 48, 36, 10, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, vs, _ in series for v in vs if v is not None]
    if y_min is None:
        y_min = min(values + [0.0])
    y, y_min, parts = _y_axis(y_min, y_max, top, plot_h, left, width - right, percent)

    def x(i):
        return left + (plot_w * i / (len(x_labels) - 1) if len(x_labels) > 1 else plot_w / 2)

    step = max(1, len(x_labels) // 8)
    for i, label in enumerate(x_labels):
        if i % step == 0:
            parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 14}" text-anchor="middle">{escape(str(label))}</text>')
    for name, vals, colour in series:
        segment = []
        for i, value in enumerate(vals):
            if value is None:
                if len(segment) > 1:
                    parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(segment)}"/>')
                segment = []
                continue
            segment.append(f"{x(i):.1f},{y(value):.1f}")
            tip = f"{x_labels[i]} · {name}: {_fmt(value, percent)}"
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(value):.1f}" r="3" fill="{colour}"><title>{escape(tip)}</title></circle>')
        if len(segment) > 1:
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(segment)}"/>')
    return _svg(width, height, title, "".join(parts))


def heatmap(title, row_labels, col_labels, matrix, *, cell=44, width=None):
    """A count matrix as shaded cells, darker for larger counts, with the count in each cell."""
    left, top = 96, 70
    n_rows, n_cols = len(row_labels), len(col_labels)
    width = width or left + cell * n_cols + 10
    height = top + cell * n_rows + 10
    peak = max((v for row in matrix for v in row), default=0) or 1
    parts = []
    for j, label in enumerate(col_labels):
        cx = left + cell * (j + 0.5)
        parts.append(f'<text transform="translate({cx:.1f},{top - 6}) rotate(-40)" text-anchor="start">{escape(label)}</text>')
    for i, label in enumerate(row_labels):
        parts.append(f'<text x="{left - 6}" y="{top + cell * (i + 0.5) + 4:.1f}" text-anchor="end">{escape(label)}</text>')
        for j, value in enumerate(matrix[i]):
            share = value / peak
            # From white to the accent blue; text turns white on dark cells.
            r, g, b = (int(255 - share * (255 - c)) for c in (31, 95, 191))
            colour = "#fff" if share > 0.55 else "#1d232b"
            tip = f"{row_labels[i]} / {col_labels[j]}: {value}"
            parts.append(
                f'<rect x="{left + cell * j}" y="{top + cell * i}" width="{cell - 1}" height="{cell - 1}" '
                f'fill="rgb({r},{g},{b})" stroke="#d9dde3"><title>{escape(tip)}</title></rect>'
                f'<text x="{left + cell * (j + 0.5):.1f}" y="{top + cell * (i + 0.5) + 4:.1f}" text-anchor="middle" '
                f'style="fill:{colour}">{value}</text>'
            )
    return _svg(width, height, title, "".join(parts))


def stacked_bars(title, rows, *, width=560, bar_h=26):
    """Horizontal 100% bars: ``rows`` is a list of (name, [(part name, count, colour), ...])."""
    left, right, top = 90, 10, 8
    plot_w = width - left - right
    height = top + (bar_h + 10) * len(rows) + 4
    parts = []
    for i, (name, segments) in enumerate(rows):
        y = top + (bar_h + 10) * i
        total = sum(count for _, count, _ in segments) or 1
        x = left
        parts.append(f'<text x="{left - 6}" y="{y + bar_h / 2 + 4:.1f}" text-anchor="end">{escape(name)}</text>')
        for part, count, colour in segments:
            w = plot_w * count / total
            if w <= 0:
                continue
            tip = f"{name} · {part}: {count} ({100 * count / total:.1f}%)"
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{colour}"><title>{escape(tip)}</title></rect>')
            if w > 44:
                parts.append(
                    f'<text x="{x + w / 2:.1f}" y="{y + bar_h / 2 + 4:.1f}" text-anchor="middle" style="fill:#fff">'
                    f"{100 * count / total:.0f}%</text>"
                )
            x += w
    return _svg(width, height, title, "".join(parts))
