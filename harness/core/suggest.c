/* suggest.c - the closest name to a word (see suggest.h). */
#include "core/suggest.h"

#include <ctype.h>
#include <string.h>

#define MAX_LEN 63
#define FAR 1000

/* Optimal string alignment distance (Damerau-Levenshtein restricted), case-insensitive. */
int kb_suggest_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > MAX_LEN || m > MAX_LEN)
        return FAR;
    int d[MAX_LEN + 1][MAX_LEN + 1];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

static const char *skip_dashes(const char *s) { return s[0] == '-' && s[1] == '-' ? s + 2 : s; }

/* s lower-cased without '-', '_' and '.' into out (at most n - 1 characters). */
static void squeeze(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        if (*s != '-' && *s != '_' && *s != '.')
            out[k++] = (char)tolower((unsigned char)*s);
    out[k] = 0;
}

/* 1 when one of a and b starts the other - case, '-', '_' and '.' aside - over at least 3
 * characters ("h100" and "h100-sxm", "llama7b" and "llama-7b-like"). */
static int prefix_of(const char *a, const char *b)
{
    char x[MAX_LEN + 1], y[MAX_LEN + 1];
    squeeze(a, x, sizeof x);
    squeeze(b, y, sizeof y);
    size_t n = strlen(x), m = strlen(y), k = n < m ? n : m;
    return k >= 3 && strncmp(x, y, k) == 0;
}

const char *kb_suggest(const char *word, const char *const *names, int n)
{
    if (!word || !names)
        return NULL;
    const char *w = skip_dashes(word), *best = NULL;
    size_t len = strlen(w);
    int limit = len <= 3 ? 1 : (int)(len / 3 > 2 ? len / 3 : 2), best_d = FAR;
    for (int i = 0; n < 0 ? names[i] != NULL : i < n; i++) {
        if (!names[i])
            continue;
        const char *c = skip_dashes(names[i]);
        int d = kb_suggest_distance(w, c);
        if (d > limit && prefix_of(w, c))
            d = limit;   /* "h100" for "h100-sxm", "llama" for "llama-7b-like" */
        if (d <= limit && d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best;
}
