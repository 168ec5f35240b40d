"""The one plot style of the pipeline's figures: the backend, the theme and
how a figure is written.

Every plotting module (hxfuse.sweep.plots and family_plots, hxfuse.graph.plots,
hxfuse.serve.plots, hxfuse.search.plots, the paper's evidence figure) draws
with :data:`plt` from here and writes with :func:`save`, so that a figure
never depends on which module happened to set matplotlib up first.

- the backend is Agg: the jobs run without a display;
- :func:`apply` is the seaborn "paper" theme with TrueType fonts in PDF
  (fonttype 42: text stays text for the paper's build) at 150 dpi; the
  sweep, search and paper figures use it, the graph and service figures
  keep matplotlib's defaults (their look predates the theme) and pass the
  same 150 dpi to :func:`save`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["FIG_WIDTH_IN", "MIN_TEXT_PT", "TEXT_WIDTH_IN", "apply", "notice", "plt", "save", "smallest_text_pt"]

# The paper's text width (paper/main.tex: a4paper, 2 cm margins: 210 - 40 =
# 170 mm).  A paper figure is drawn at most this wide and included at its
# natural size (hxfuse.paper.sections), so a font size set here is the size
# printed; MIN_TEXT_PT is the smallest the render test lets a figure carry.
TEXT_WIDTH_IN = 170 / 25.4
MIN_TEXT_PT = 6.0
# the width a paper figure is drawn at: save's tight bounding box adds a
# 0.1 in pad on each side, so the written PDF is at most the text width
FIG_WIDTH_IN = TEXT_WIDTH_IN - 0.2


def apply() -> None:
    """The seaborn paper theme and the PDF font and resolution settings."""
    import seaborn as sns

    sns.set_theme(context="paper", style="whitegrid", font_scale=1.0)
    plt.rcParams.update({"pdf.fonttype": 42, "ps.fonttype": 42, "savefig.dpi": 150, "figure.dpi": 100})


def save(fig, out: Sequence[str | Path], dpi: float | None = None) -> None:
    """Write *fig* to every path of *out* (parents made; tight bounding box;
    *dpi* where given, else the style's) and close it."""
    extra = {} if dpi is None else {"dpi": dpi}
    for path in out:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, bbox_inches="tight", **extra)
    plt.close(fig)


def smallest_text_pt(fig) -> tuple[float, str]:
    """The smallest font size (points, at the figure's own size) of any
    visible, non-empty text of *fig*, and that text: what a reader sees when
    the figure is printed at its natural size."""
    from matplotlib.text import Text

    sizes = [
        (float(t.get_fontsize()), t.get_text())
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_figure() is not None
    ]
    return min(sizes) if sizes else (float("inf"), "")


def notice(out: Sequence[str | Path], text: str, **text_style) -> None:
    """A figure that is only a sentence, centred: what was not drawn and why
    (no points to draw, an emulated target's timings).  *text_style*: extra
    matplotlib text properties (colour, size)."""
    fig, ax = plt.subplots(figsize=(6, 2))
    ax.text(0.5, 0.5, text, ha="center", va="center", **text_style)
    ax.set_axis_off()
    save(fig, out)
