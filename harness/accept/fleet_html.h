/* fleet_html.h - the fleet verdict as one self-contained HTML page: the verdict, the
 * problems, and per SKU, timing clock and test a chart of every GPU's value (a dot, red
 * when it FAILed, its rank, UUID and reason on hover) against the fleet's median and the
 * outlier bound (logarithmic when the values span more than 20x). No script, no external
 * file. */
#ifndef KB_ACCEPT_FLEET_HTML_H
#define KB_ACCEPT_FLEET_HTML_H

#include <stdio.h>

#include "accept/fleet.h"

/* Write the page for fleet object fj (kb_fleet_json) to out. KB_ERR_IO when out fails. */
kb_status kb_fleet_html(json_t *fj, FILE *out);

#endif /* KB_ACCEPT_FLEET_HTML_H */
