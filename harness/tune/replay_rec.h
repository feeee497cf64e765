/* replay_rec.h - the kbench-records half of the replay reader (replay.h): records grouped
 * into problems as `kbench tune` groups cases, one problem's configurations, and for a
 * family kbench knows each configuration's case (for --prior estimate). */
#ifndef KB_TUNE_REPLAY_REC_H
#define KB_TUNE_REPLAY_REC_H

#include "tune/replay_types.h"

/* Load the records of path (JSON Lines, a regular file replay.c checked) into *out, the
 * problem whose key contains filter (NULL: the one with most records). KB_OK;
 * KB_ERR_INPUT with "path: ..." in err (not records, no problem, a hostile field);
 * KB_ERR_IO unreadable; KB_ERR_INTERNAL out of memory. *out is partly filled on error
 * (kb_tune_replay_free it). */
kb_status kb_replay_load_records(const char *path, const char *filter, kb_tune_replay *out, kb_sb *err);

#endif /* KB_TUNE_REPLAY_REC_H */
