/* report_svg.h - the roofline chart of a run's device as inline SVG. */
#ifndef KB_REPORT_SVG_H
#define KB_REPORT_SVG_H

#include "results/report_rows.h"

/* The roofline of device dev as an inline <svg> element (log-log: x arithmetic
 * intensity, y TFLOPS; the bandwidth slope and the compute ceiling of each dtype from
 * the recorded peaks; one point per ok case with a <title> tooltip of its id). */
void kb_report_svg_roofline(const kb_report_run *run, int dev, FILE *out);

#endif
