/* replay.c - run the fuzz target over every file of the directories given, as an
 * ordinary test (no libFuzzer needed): the regression corpus of inputs that once
 * crashed, and the seed corpus. Exit 0 when every input was handled. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    uint8_t *buf = malloc(1u << 20);
    size_t n = buf ? fread(buf, 1, 1u << 20, f) : 0;
    fclose(f);
    if (!buf)
        return 1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) {
            fprintf(stderr, "replay: cannot open %s\n", argv[a]);
            return 1;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            bad += replay_file(path);
            files++;
        }
        closedir(d);
    }
    printf("%d passed, %d failed\n", files - bad, bad);
    return bad ? 1 : 0;
}
