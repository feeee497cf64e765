/* model_html.h - a model roll-up (model_rollup.h) as one self-contained HTML page: per
 * phase the per-op table and an SVG bar chart of each op's share of the step, the
 * totals, the precision what-if. No scripts, no external files; well-formed XML. */
#ifndef KB_MODEL_HTML_H
#define KB_MODEL_HTML_H

#include <stdio.h>

#include "model/model_rollup.h"

/* Write the page; the caller checks the stream. */
void kb_model_html(const kb_model_rollup *r, FILE *out);

/* The page's content without the page around it (an <h1 id="model"> section), for another
 * page: `kbench model --with-report` puts it at the end of the run's HTML report. */
void kb_model_html_section(const kb_model_rollup *r, FILE *out);

#endif /* KB_MODEL_HTML_H */
