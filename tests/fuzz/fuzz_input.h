/* fuzz_input.h - for fuzz targets whose reader takes a path: the input written to one file
 * in a private directory (/dev/shm when there is one: memory, not disk), kept for the
 * process and rewritten for every input. */
#ifndef KB_FUZZ_INPUT_H
#define KB_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The private directory (made once; static storage). */
static const char *fuzz_dir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/kb_fuzz.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir))
            abort();
    }
    return dir;
}

/* Write data to <fuzz_dir>/name; its path (static storage until the next call). */
static const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    return path;
}

#endif /* KB_FUZZ_INPUT_H */
