/* fuzz_coll.c - libFuzzer target for what the collectives read from the user: the launcher
 * variables (core/identity), the rendezvous settings (KBENCH_RENDEZVOUS, _TIMEOUT,
 * KBENCH_JOB_KEY, KBENCH_WORLD_SIZE), the fault hooks (KBENCH_EMU_SLOWDOWN, _CORRUPT,
 * KBENCH_FAULT_RANKS) and nccl-tests' size syntax with the sweep. The input is an
 * environment, "NAME=VALUE" per line. Every refusal must name its variable (or the size's
 * option); every acceptance must be consistent (rank below the world size, a rendezvous
 * with a port in range and a key, a sweep of sizes within its bounds).
 *
 * Built by -DKB_FUZZ=ON with clang (scripts/fuzz.sh 60 coll); seeds and inputs that once
 * crashed: tests/fuzz/coll_regressions/, replayed by the test fuzz_coll_regressions. */
#include "collective/coll_comm.h"
#include "collective/coll_def.h"
#include "collective/rendezvous.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_VARS 32

static char *table_get(void *user, const char *name)
{
    for (char **kv = user; *kv; kv += 2)
        if (!strcmp(kv[0], name))
            return kv[1];
    return NULL;
}

/* Split text into a NAME, VALUE table (in place). */
static void parse_env(char *text, char **kv)
{
    int k = 0;
    for (char *line = strtok(text, "\n"); line && k < 2 * MAX_VARS; line = strtok(NULL, "\n")) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = 0;
        kv[k++] = line;
        kv[k++] = eq + 1;
    }
    kv[k] = NULL;
}

static void sizes(char **kv)
{
    uint64_t v[3] = { 8, 1024, 2 }, out[64];
    const char *names[3] = { "SWEEP_MIN", "SWEEP_MAX", "SWEEP_FACTOR" };
    char err[512];
    for (int i = 0; i < 3; i++) {
        const char *s = table_get(kv, names[i]);
        if (s && kb_coll_parse_size(s, names[i], &v[i], err, sizeof err) != 0 && !strstr(err, names[i]))
            abort();
    }
    kb_coll_sweep sw = { v[0], v[1], v[2] ? v[2] : 1, v[2] };
    int k = kb_coll_sweep_sizes(&sw, out, 64, err, sizeof err);
    for (int i = 0; i < k; i++)
        if (out[i] < sw.min_bytes || out[i] > sw.max_bytes || (i && out[i] <= out[i - 1]))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1), *kv[2 * MAX_VARS + 1], err[1024];
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    parse_env(text, kv);
    kb_identity id;
    kb_rdv r;
    if (kb_identity_read(table_get, kv, "fuzzhost", &id, err, sizeof err) != 0) {
        if (!strchr(err, '='))
            abort();   /* a refusal names NAME=VALUE */
    } else {
        if (id.rank < 0 || (id.world_size > 0 && id.rank >= id.world_size) || strpbrk(id.job_key, "/ \\"))
            abort();
        if (kb_rdv_setup(table_get, kv, &id, &r, err, sizeof err) != 0) {
            if (!strstr(err, "KBENCH_") && !strstr(err, "_SIZE") && !strstr(err, "SLURM_NTASKS"))
                abort();   /* names the variable to set or fix */
        } else if ((r.kind == KB_RDV_TCP && (r.port < 1 || r.port > 65535 || !r.host[0])) ||
                   (r.kind == KB_RDV_DIR && (!r.path[0] || !r.key[0])) || !(r.timeout_s > 0)) {
            abort();
        }
        double slow;
        int bad;
        if (kb_coll_faults_read(table_get, kv, id.rank, &slow, &bad, err, sizeof err) != 0 ? !strstr(err, "KBENCH_")
                                                                                          : !(slow >= 1 && slow <= 1000))
            abort();
    }
    sizes(kv);
    free(text);
    return 0;
}
