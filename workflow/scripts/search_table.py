"""search_table: one LaTeX row per search (Jinja2 template, as hxfuse.render.latex's tables)."""

from pathlib import Path

from hxfuse import intermediate
from hxfuse.render import latex
from hxfuse.search import compare as search

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    docs = [intermediate.read_json_object(p) for p in sm.input.results]
    tex = latex._template(sm.input.template).render(
        rows=search.table_rows(docs, latex.tex_escape), min_effect_pct=f"{100 * float(sm.params.min_effect):g}"
    )
    Path(sm.output[0]).write_text(tex)
