/* model_report.h - a model roll-up (model_rollup.h) written as markdown, HTML (tables
 * and an SVG chart of time per op, self-contained), JSON, or a per-step trace timeline
 * (model_trace.h). Every time and rate carries
 * the roll-up's timing label; an emulator roll-up says its figures are CPU figures and
 * gives no MFU or roofline percentages. */
#ifndef KB_MODEL_REPORT_H
#define KB_MODEL_REPORT_H

#include <stdio.h>

#include "model/model_rollup.h"

typedef enum { KB_MODEL_MD = 0, KB_MODEL_JSON, KB_MODEL_HTML, KB_MODEL_TRACE } kb_model_format;

/* Write the roll-up in format f. KB_ERR_IO when the stream fails. */
kb_status kb_model_write(const kb_model_rollup *r, kb_model_format f, FILE *out);

#endif /* KB_MODEL_REPORT_H */
