"""Charts for the report pages, rendered on the server as SVG by pygal (no JavaScript: pygal's
scripts are left out; the page shows the numbers in a table beside each chart)."""

from __future__ import annotations

from collections.abc import Callable

import pygal
from pygal.style import Style

STYLE = Style(background="white", plot_background="white", foreground="#222", foreground_strong="#000",
              foreground_subtle="#666", colors=("#0b3d91", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#7f8c8d"),
              font_family="DejaVu Sans, sans-serif")


def _config(title: str, labels: list[str], fmt: Callable[[float], str] | None) -> dict:
    extra = {"value_formatter": fmt} if fmt is not None else {}
    return extra | {"title": title, "x_labels": labels, "style": STYLE, "js": [], "width": 760, "height": 360,
            "explicit_size": True, "show_legend": True, "legend_at_bottom": True, "x_label_rotation": 30,
            "disable_xml_declaration": False, "print_values": False}


def line(fmt: Callable[[float], str] | None, title: str, labels: list[str],
         series: dict[str, list[float | None]]) -> bytes:
    """A line chart: one line per ``series`` name, one point per label; ``fmt`` writes a value
    (axis labels, tooltips) as the page does, ``None`` for pygal's own."""
    chart = pygal.Line(**_config(title, labels, fmt))
    for name, values in series.items():
        chart.add(name, values)
    return chart.render()


def bar(fmt: Callable[[float], str] | None, title: str, labels: list[str], series: dict[str, list[float | None]],
        stacked: bool = False) -> bytes:
    """A bar chart (``stacked`` for parts of a whole); ``fmt`` as for ``line``."""
    chart = (pygal.StackedBar if stacked else pygal.Bar)(**_config(title, labels, fmt))
    for name, values in series.items():
        chart.add(name, values)
    return chart.render()
