"""Server-rendered plots of a finished evaluation (matplotlib, Agg backend, PNG bytes)."""
from __future__ import annotations

import io
from typing import Any

from core.file_cache import cached_bytes

MAX_SCATTERS = 6


def evaluation_plot_caption(results: dict[str, Any]) -> str:
    """What the plot shows, saying so when the scatter plots are capped."""
    n = len(results.get("columns") or {})
    shown = min(n, MAX_SCATTERS)
    capped = f" (showing {shown} of {n}; the table lists all)" if n > shown else ""
    return f"Spearman ρ of {n} metric columns; scatter plots of the first {shown}{capped}."


def evaluation_plot_cached(evaluation: Any) -> bytes:
    """Drawn once per computed evaluation and kept as a file (see core/file_cache.py)."""

    stamp = evaluation.computed_at.strftime("%Y%m%dT%H%M%S%f") if evaluation.computed_at else "pending"
    return cached_bytes(key=f"metrics/evaluation-{evaluation.pk}-{stamp}.png",
                        render=lambda: evaluation_plot_png(evaluation.results))


def evaluation_plot_png(results: dict[str, Any]) -> bytes:
    """Left: Spearman rho per metric column (overall bar, one dot per style). Right: metric vs mean human rating
    scatters for the first columns, coloured by system."""
    # heavy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # heavy: matplotlib loads only when a figure is drawn
    import matplotlib.pyplot as plt

    columns = results.get("columns") or {}
    names = list(columns)
    scatter_names = names[:MAX_SCATTERS]
    n_scatter = len(scatter_names)
    n_cols = 1 + min(n_scatter, 3)
    n_rows = max(1, (n_scatter + 2) // 3)
    fig = plt.figure(figsize=(4.2 * n_cols, 3.4 * n_rows), dpi=90)
    grid = fig.add_gridspec(n_rows, n_cols)

    bars = fig.add_subplot(grid[:, 0])
    rhos = [columns[n]["overall"].get("rho") or 0.0 for n in names]
    positions = range(len(names))
    bars.barh(list(positions), rhos, color="#4C72B0", label="overall")
    styles = sorted({s for n in names for s in (columns[n].get("by_style") or {})})
    markers = "osD^v<>p*h"
    for k, style in enumerate(styles):
        xs = [((columns[n].get("by_style") or {}).get(style) or {}).get("rho") for n in names]
        points = [(x, y) for y, x in zip(positions, xs, strict=True) if x is not None]
        if points:
            bars.scatter([p[0] for p in points], [p[1] for p in points], marker=markers[k % len(markers)],
                         color="black", zorder=3, s=18, label=style)
    bars.set_yticks(list(positions), names, fontsize=8)
    bars.invert_yaxis()
    bars.axvline(0, color="grey", linewidth=0.8)
    bars.set_xlim(-1, 1)
    bars.set_xlabel(f"Spearman rho with mean '{results.get('question', '')}' rating")
    if styles:
        bars.legend(fontsize=7, loc="lower right")

    items = results.get("items") or []
    systems = sorted({i.get("system") or "" for i in items})
    palette = plt.get_cmap("tab10")
    for k, name in enumerate(scatter_names):
        ax = fig.add_subplot(grid[k // 3, 1 + k % 3])
        for s_index, system in enumerate(systems):
            pts = [(i["scores"].get(name), i["human"]) for i in items
                   if (i.get("system") or "") == system and i["scores"].get(name) is not None]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, alpha=0.75,
                           color=palette(s_index % 10), label=system or "items")
        rho = columns[name]["overall"].get("rho")
        ax.set_title(f"{name}  rho={rho:.2f}" if rho is not None else name, fontsize=9)
        ax.set_xlabel(name, fontsize=8)
        ax.set_ylabel("mean human rating", fontsize=8)
        ax.tick_params(labelsize=7)
        if k == 0 and any(systems):
            ax.legend(fontsize=6)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()
