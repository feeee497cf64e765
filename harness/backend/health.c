/* health.c - the names of the health values (see health.h). */
#include "backend/health.h"

#include <stdio.h>
#include <string.h>

static const char *const names[] = {
    "ecc_mode", "ecc_uncorrected_volatile", "ecc_uncorrected_aggregate", "retired_pages_sbe",
    "retired_pages_dbe", "retired_pages_pending", "remapped_rows_correctable", "remapped_rows_uncorrectable",
    "remap_pending", "remap_failed", "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max", "gpu_idle",
};
_Static_assert(sizeof names / sizeof names[0] == KB_H_COUNT, "one name per health value");

const char *kb_health_name(kb_health_field f) { return f < KB_H_COUNT ? names[f] : "?"; }

void kb_health_unread(kb_health *h, const char *why)
{
    memset(h, 0, sizeof *h);
    snprintf(h->why, sizeof h->why, "%s", why);
    for (int i = 0; i < KB_H_COUNT; i++)
        snprintf(h->f[i].why, sizeof h->f[i].why, "%.199s", why);
    snprintf(h->serial_why, sizeof h->serial_why, "%.199s", why);
    snprintf(h->pci_why, sizeof h->pci_why, "%.199s", why);
}
