/* fleet_md.h - the fleet verdict as a markdown page: the verdict and exit code, the
 * problems (missing, duplicate, corrupt rank files), a row per GPU grouped by node, every
 * FAIL and WARN with its reason, and the distribution of each test per SKU. */
#ifndef KB_ACCEPT_FLEET_MD_H
#define KB_ACCEPT_FLEET_MD_H

#include <stdio.h>

#include "accept/fleet.h"

/* Write the page for fleet object fj (kb_fleet_json) to out. KB_ERR_IO when out fails. */
kb_status kb_fleet_markdown(json_t *fj, FILE *out);

#endif /* KB_ACCEPT_FLEET_MD_H */
