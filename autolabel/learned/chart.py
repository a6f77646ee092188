"""The learning curve, server-rendered as SVG with the reports' chart helpers (no JavaScript library)."""

from __future__ import annotations

from django.utils.html import escape

from annotator.reports.charts import PALETTE, _svg, nice_ticks


def learning_curve_chart(title: str, points: list[dict], *, width: int = 360, height: int = 240) -> str:
    """Cross-validated macro F1 (y, 0–1) against the gold sentences trained on (x): one dot per point, joined.
    ``points`` are ``validation.cross_validate``'s learning curve; a point without a macro draws nothing."""
    left, right, top, bottom = 44, 14, 10, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    drawn = [p for p in points if p.get("macro_f1") is not None]
    most = max((p["sentences"] for p in points), default=1) or 1
    x_ticks = nice_ticks(0, most, 5)

    def x(value):
        return left + plot_w * value / (x_ticks[-1] or 1)

    def y(value):
        return top + plot_h * (1 - value)

    parts = []
    for tick in nice_ticks(0.0, 1.0):
        parts.append(f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}"/>')
        parts.append(f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.1f}</text>')
    for tick in x_ticks:
        parts.append(f'<text x="{x(tick):.1f}" y="{top + plot_h + 14}" text-anchor="middle">{tick:g}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle">gold sentences trained on</text>')
    parts.append(f'<text transform="translate(12,{y(0.5):.1f}) rotate(-90)" text-anchor="middle">macro F1</text>')
    if len(drawn) > 1:
        line = " ".join(f"{x(p['sentences']):.1f},{y(p['macro_f1']):.1f}" for p in drawn)
        parts.append(f'<polyline points="{line}" fill="none" stroke="{PALETTE[0]}" stroke-width="2"/>')
    for point in drawn:
        tip = f"{point['sentences']} gold sentences: macro F1 {point['macro_f1']:.3f}"
        parts.append(f'<circle cx="{x(point["sentences"]):.1f}" cy="{y(point["macro_f1"]):.1f}" r="4" '
                     f'fill="{PALETTE[0]}"><title>{escape(tip)}</title></circle>')
    parts.append(f'<line class="axis" x1="{left}" x2="{left + plot_w}" y1="{y(0):.1f}" y2="{y(0):.1f}"/>')
    return _svg(width, height, title, "".join(parts))
