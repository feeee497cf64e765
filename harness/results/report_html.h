/* report_html.h - HTML: one self-contained page laid out for its questions: a summary
 * first (cases by status and skip reason; per shape and dtype the fastest verified
 * configuration, its median and its margin over the next fastest), a table of contents,
 * then the sections of report_rows.h's kb_report_section - the fastest configurations
 * listed, the precision comparison, the tile sweep per shape (report_tiles.h), graph vs
 * eager, the verification margins, the roofline of each GPU device (report_svg.h) and
 * every case (report_cases.h). Emulator runs say their times are CPU times and draw no
 * roofline. */
#ifndef KB_REPORT_HTML_H
#define KB_REPORT_HTML_H

#include "results/report_rows.h"

/* Write run to out: the whole page (want KB_SECTION_ALL) or its header and section want
 * alone (KB_SECTION_PRECISION, kbench report RUN --precision: a bar chart and table per shape
 * and input distribution, or a line saying there is none). KB_ERR_IO when the stream fails,
 * KB_ERR_OOM. */
kb_status kb_report_html(const kb_report_run *run, kb_report_section want, FILE *out);

#endif
