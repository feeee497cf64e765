/* store_load.h - the records of one run read back from the SQLite store (store.h keeps each
 * record whole in cases.record), for commands that take a run id: a run whose JSON Lines
 * file is gone is still in the store. */
#ifndef KB_STORE_LOAD_H
#define KB_STORE_LOAD_H

#include "results/report_rows.h"

/* Load run_id's records from the store at db_path (opened read-only) into out, in the
 * order they were stored. KB_ERR_INPUT with a message in err when the file is not a store
 * or holds no record of that run. Free with kb_report_run_free. */
kb_status kb_store_load_run(const char *db_path, const char *run_id, kb_report_run *out, kb_sb *err);

#endif
