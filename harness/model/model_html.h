/* model_html.h - a model roll-up (model_rollup.h) as one self-contained HTML page: per
 * phase the per-op table and an SVG bar chart of each op's share of the step, the
 * totals, the precision what-if. No scripts, no external files; well-formed XML. */
#ifndef KB_MODEL_HTML_H
#define KB_MODEL_HTML_H

#include <stdio.h>

#include "model/model_rollup.h"

/* Write the page; the caller checks the stream. */
void kb_model_html(const kb_model_rollup *r, FILE *out);

#endif /* KB_MODEL_HTML_H */
