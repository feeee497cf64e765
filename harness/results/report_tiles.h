/* report_tiles.h - the tile sweep of the HTML report: one chart per shape (family, shape
 * preset or dims, problem params, device), not per family - today's question "which
 * configuration for this shape?" is answered by one picture. A chart is a grid of panels,
 * one per dtype and pad; each panel ranks the configurations measured for it, fastest
 * first, bar length the median, the ratio to the panel's fastest beside it; the label is
 * the configuration (report_best.h: the variant and the params that vary in the family).
 * Inline SVG, <svg class="chart" data-chart="tiles-FAMILY">, a <rect> with a <title> (the
 * case id and its median) per measured configuration; text escaped (well-formed XML).
 */
#ifndef KB_REPORT_TILES_H
#define KB_REPORT_TILES_H

#include "results/report_best.h"

/* The shapes of run: for each row, the index of its shape (problem without dtype and pad)
 * in order of first appearance, into shape[row] (malloc'ed, caller frees). Returns the
 * number of shapes, -1 out of memory. */
int kb_report_shapes(const kb_report_run *run, const kb_report_axes *ax, int **shape);

/* The chart of shape s (rows with shape[row] == s), with the heading id "tiles-S". Writes
 * a line instead of a chart when none of its rows was measured. */
void kb_report_tiles_chart(const kb_report_run *run, const kb_report_axes *ax, const int *shape, int s, FILE *out);

#endif /* KB_REPORT_TILES_H */
