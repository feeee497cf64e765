/* fleet.h - `kbench fleet DIR`: merge the verdict files `kbench accept --out-dir DIR`
 * ranks wrote, flag outliers per SKU across the fleet and within each node
 * (accept/fleet.h), and write fleet.json, fleet.md, fleet.html and fleet.junit.xml (into DIR unless
 * --out-dir). Exit code: the worst GPU's (6 incorrect, 5 slow or outlier, 3 nothing
 * checked or a missing/duplicate/corrupt rank file, 0 pass); 2 when DIR cannot be read. */
#ifndef KB_CLI_FLEET_H
#define KB_CLI_FLEET_H

#include "cli/opts.h"

typedef struct {
    const char *dir;
    const char *out_dir;        /* NULL: dir */
    double k;                   /* outlier bound in robust scales */
    double rel_floor;           /* the scale's floor, relative to the median */
    int quiet;                  /* no markdown on stdout */
} kb_fleet_opts;

extern const kb_command kb_command_fleet;

#endif /* KB_CLI_FLEET_H */
