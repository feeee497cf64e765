/* report_charts.h - the charts of the HTML report beside the roofline (report_svg.h) and
 * the tile sweep (report_tiles.h), as inline SVG, drawn for every run (on the emulator with
 * CPU times, labelled so):
 *   - the verification margin: each verified case's max error / tolerance on a log axis
 *     (labelled), grouped by family (named under the axis), the tolerance (1) marked -
 *     meaningful on the emulator too;
 *   - per precision group (report_rows.h), bars of the best median per dtype and the vendor
 *     row, with the speed-up over fp16 and the max error beside each bar.
 * Every chart is an <svg class="chart" data-chart="KIND"> holding one <rect> or <circle>
 * per value with a <title> tooltip naming its case; a chart with nothing to show is not
 * written. Text is escaped (kb_report_xml_text): the page stays well-formed XML. */
#ifndef KB_REPORT_CHARTS_H
#define KB_REPORT_CHARTS_H

#include "results/report_rows.h"

/* The verification-margin chart of device dev. */
void kb_report_chart_margin(const kb_report_run *run, int dev, FILE *out);

/* The bar chart of one precision group. */
void kb_report_chart_precision(const kb_report_run *run, const kb_precision_group *g, FILE *out);

/* The inline script that makes every <table class="sortable"> sort by a clicked header
 * (numbers numerically, again to reverse) and every <input class="filter" data-table=ID>
 * hide the rows of table ID that do not contain its text. Written without <, > or & so
 * the page stays well-formed XML. */
void kb_report_table_script(FILE *out);

#endif
