/* model.h - `kbench model`: a model description rolled up from one recorded run. */
#ifndef KB_CLI_MODEL_H
#define KB_CLI_MODEL_H

#include "cli/opts.h"

/* kbench model RUN --model NAME|FILE [--format md|json|html|trace] [--with-report] [--out FILE] [--dtype DT]
 *                  [--set PARAM=N]... [--results DIR] [--db PATH]
 * RUN is a .jsonl file, a run id found in a .jsonl file of DIR, else a run id in the results
 * store PATH (default $KBENCH_DB, else results/kbench.db); NAME is data/models/NAME.yaml.
 * Writes the roll-up (model/model_report.h) to stdout or FILE (complete or not at all).
 * KB_EXIT_OK (missing ops are reported, not an error); KB_EXIT_INPUT for bad options, a
 * bad model description (file:line:col) or run; KB_EXIT_SETUP when FILE cannot be written. */
extern const kb_command kb_command_model;

#endif /* KB_CLI_MODEL_H */
