"""LaTeX-safe text: the one escaper of the package.

Standard library only and free of other imports, so that the aggregation
(through hxfuse.sweep.families) can use it without depending on the table code in
hxfuse.render.latex: editing a table must not rerun the aggregation.
"""

from __future__ import annotations

_TEX_SPECIAL = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
    # in the default OT1 encoding a bare < or > prints as an inverted ! or ?
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def tex_escape(s) -> str:
    """*s* (any value, as str) with every LaTeX special character escaped."""
    return "".join(_TEX_SPECIAL.get(c, c) for c in str(s))
