"""The reliability diagram, server-rendered as SVG with the reports' chart helpers (no JavaScript library)."""

from __future__ import annotations

from django.utils.html import escape

from annotator.reports.charts import PALETTE, _svg, nice_ticks

PERFECT = "#757575"


def reliability_diagram(title: str, bins: list[dict], *, size: int = 300) -> str:
    """Accuracy per confidence bin (bars) against the diagonal of perfect calibration.

    ``bins`` are ``calibration.reliability``'s rows. A bar below the diagonal is overconfidence
    (right less often than the votes suggest), above it underconfidence; a dot marks the bin's mean
    confidence. Empty bins draw nothing.
    """
    left, right, top, bottom = 44, 12, 10, 40
    plot = size - left - max(right, 0)
    plot_h = size - top - bottom
    width, height = left + plot + right, size

    def x(value):
        return left + plot * value

    def y(value):
        return top + plot_h * (1 - value)

    parts = []
    for tick in nice_ticks(0.0, 1.0):
        parts.append(f'<line class="grid" x1="{left}" x2="{x(1):.1f}" y1="{y(tick):.1f}" y2="{y(tick):.1f}"/>')
        parts.append(f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.1f}</text>')
        parts.append(f'<text x="{x(tick):.1f}" y="{top + plot_h + 14}" text-anchor="middle">{tick:.1f}</text>')
    parts.append(f'<text x="{x(0.5):.1f}" y="{height - 6}" text-anchor="middle">confidence</text>')
    parts.append(f'<text transform="translate(12,{y(0.5):.1f}) rotate(-90)" text-anchor="middle">accuracy</text>')
    for row in bins:
        if not row["count"]:
            continue
        x0, x1 = x(row["low"]), x(row["high"])
        tip = (f"confidence {row['low']:.1f}–{row['high']:.1f}: {row['count']} predictions, "
               f"mean confidence {row['confidence']:.3f}, accuracy {row['accuracy']:.3f}")
        parts.append(
            f'<rect x="{x0 + 1:.1f}" y="{y(row["accuracy"]):.1f}" width="{x1 - x0 - 2:.1f}" '
            f'height="{max(y(0) - y(row["accuracy"]), 0.5):.1f}" fill="{PALETTE[0]}" fill-opacity="0.75">'
            f"<title>{escape(tip)}</title></rect>"
        )
        parts.append(f'<circle cx="{x(row["confidence"]):.1f}" cy="{y(row["confidence"]):.1f}" r="3" '
                     f'fill="{PALETTE[1]}"><title>{escape(tip)}</title></circle>')
    parts.append(f'<line x1="{x(0):.1f}" y1="{y(0):.1f}" x2="{x(1):.1f}" y2="{y(1):.1f}" stroke="{PERFECT}" '
                 'stroke-dasharray="4 3"><title>perfect calibration</title></line>')
    parts.append(f'<line class="axis" x1="{left}" x2="{x(1):.1f}" y1="{y(0):.1f}" y2="{y(0):.1f}"/>')
    return _svg(width, height, title, "".join(parts))
