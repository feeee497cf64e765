/* suite_entry.h - one benchmark entry of a suite. */
#ifndef KB_SUITE_ENTRY_H
#define KB_SUITE_ENTRY_H

#include "suite/suite_loader.h"

/* Read benchmark entry number index (0-based) from node n into e. */
kb_status kb_suite_load_entry(kb_loader *L, const yaml_node_t *n, int index, kb_suite_entry *e);

#endif /* KB_SUITE_ENTRY_H */
