"""The overview's arrivals plot: participants arriving per hour or day as bars with the running total as a line, an
inline SVG drawn on the server (nothing fetched from outside, no script), titled for screen readers."""
from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

WIDTH, HEIGHT, PAD_LEFT, PAD_BOTTOM, PAD_TOP = 640, 180, 40, 28, 10
BAR_MAX = 40


def _label(moment: dt.datetime, unit: str) -> str:
    return moment.strftime("%d %b %H:00" if unit == "hour" else "%d %b")


def arrivals_svg(arrivals: dict[str, Any]) -> SafeString:
    """Bars of arrivals per bucket and the cumulative line, scaled to the largest; "No arrivals yet" when empty."""
    buckets: list[tuple[dt.datetime, int]] = arrivals["buckets"]
    if not buckets:
        return format_html('<p class="overview-empty">No participant has arrived yet.</p>')
    unit = arrivals["unit"]
    total = sum(n for _, n in buckets)
    peak = max(n for _, n in buckets)
    plot_w, plot_h = WIDTH - PAD_LEFT - 10, HEIGHT - PAD_TOP - PAD_BOTTOM
    step = plot_w / len(buckets)
    bars, line, running = [], [], 0
    for i, (moment, n) in enumerate(buckets):
        running += n
        height = plot_h * n / peak
        x = PAD_LEFT + i * step
        width = min(max(step * 0.8, 1), BAR_MAX)
        bars.append((f"{x + (step - width) / 2:.1f}", f"{PAD_TOP + plot_h - height:.1f}", f"{width:.1f}",
                     f"{height:.1f}", f"{_label(moment, unit)}: {n}"))
        line.append(f"{x + step / 2:.1f},{PAD_TOP + plot_h - plot_h * running / total:.1f}")
    first, last = _label(buckets[0][0], unit), _label(buckets[-1][0], unit)
    summary = f"{total} arrivals from {first} to {last}, at most {peak} in one {unit}"
    return format_html(
        '<svg class="overview-arrivals" role="img" aria-labelledby="arrivals-title arrivals-desc" '
        'viewBox="0 0 {w} {h}" width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg">'
        '<title id="arrivals-title">Arrivals per {unit}</title><desc id="arrivals-desc">{summary}; the line is the '
        'running total.</desc>'
        '<line x1="{pl}" y1="{base}" x2="{right}" y2="{base}" stroke="#555"/>'
        '<g fill="#417690">{bars}</g>'
        '<polyline fill="none" stroke="#ba2121" stroke-width="2" points="{line}"/>'
        '<text x="{pl}" y="{label_y}" font-size="11" fill="#333">{first}</text>'
        '<text x="{right}" y="{label_y}" font-size="11" fill="#333" text-anchor="end">{last}</text>'
        '<text x="4" y="{top_y}" font-size="11" fill="#333">{peak}</text>'
        '<text x="4" y="{base}" font-size="11" fill="#333">0</text></svg>',
        w=WIDTH, h=HEIGHT, unit=unit, summary=summary, pl=PAD_LEFT, base=PAD_TOP + plot_h, right=WIDTH - 10,
        bars=format_html_join("", '<rect x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>', bars),
        line=" ".join(line), label_y=HEIGHT - 8, first=first, last=last, top_y=PAD_TOP + 10, peak=peak)
