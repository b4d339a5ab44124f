"""Charts drawn on the server as SVG: the geometry of bar charts and the
heatmap, computed here so that the templates only place shapes. No chart
script runs in the browser, and nothing is styled inline (the pages'
Content-Security-Policy refuses it): sizes and colours are SVG presentation
attributes. Every chart also has its numbers in a table beside it."""

from __future__ import annotations

from dataclasses import dataclass

WIDTH, HEIGHT = 640, 220
LEFT, BOTTOM, TOP = 40, 28, 10
HEAT_CELL = 22


@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    x: float
    y: float
    width: float
    height: float
    href: str | None


@dataclass(frozen=True)
class Tick:
    value: int
    y: float


def nice_max(top: int) -> int:
    """The axis' top: the largest value rounded up to 1, 2 or 5 x 10^n."""
    if top <= 5:
        return max(top, 1)
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= top:
                return step * scale
        scale *= 10


def bars(items: list[tuple[str, int, str | None]], width: int = WIDTH,
         height: int = HEIGHT) -> dict[str, object]:
    """A vertical bar chart of (label, value, link) in order."""
    top = nice_max(max((value for _, value, _ in items), default=0))
    plot_w, plot_h = width - LEFT - 8, height - BOTTOM - TOP
    slot = plot_w / max(len(items), 1)
    gap = min(slot * 0.2, 12)
    shapes = []
    for i, (label, value, href) in enumerate(items):
        h = plot_h * value / top
        shapes.append(Bar(label, value, LEFT + i * slot + gap / 2, TOP + plot_h - h, max(slot - gap, 1), h,
                          href))
    ticks = [Tick(v, TOP + plot_h - plot_h * v / top) for v in sorted({0, top // 2, top})]
    step = max(1, -(-len(items) // 12))  # at most about 12 axis labels
    return {"bars": shapes, "ticks": ticks, "width": width, "height": height, "left": LEFT,
            "base": TOP + plot_h, "label_every": step}


def hbars(items: list[tuple[str, int, str | None]], width: int = WIDTH, row: int = 26,
          label_width: int = 200) -> dict[str, object]:
    """A horizontal bar chart (long labels: places, causes)."""
    top = nice_max(max((value for _, value, _ in items), default=0))
    plot_w = width - label_width - 48
    shapes = [Bar(label, value, label_width, i * row + 4, plot_w * value / top, row - 8, href)
              for i, (label, value, href) in enumerate(items)]
    return {"bars": shapes, "width": width, "height": max(len(items), 1) * row + 4,
            "label_width": label_width}


@dataclass(frozen=True)
class HeatCell:
    count: int
    x: int
    y: int
    opacity: float


def heatmap(counts: list[list[int]]) -> dict[str, object]:
    """Weekday-by-hour cells, each with an opacity from 0.08 (none) to 1."""
    top = max((c for day in counts for c in day), default=0) or 1
    cells = [HeatCell(c, 44 + h * HEAT_CELL, d * HEAT_CELL + 4,
                      round(0.08 + 0.92 * c / top, 2) if c else 0.04)
             for d, day in enumerate(counts) for h, c in enumerate(day)]
    return {"cells": cells, "size": HEAT_CELL - 2, "width": 44 + 24 * HEAT_CELL,
            "height": 7 * HEAT_CELL + 24}
