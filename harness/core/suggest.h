/* suggest.h - "did you mean": the closest of a list of names to a word that matched none,
 * for the messages of every refused name (commands, options, choices, models, GPUs). */
#ifndef KB_SUGGEST_H
#define KB_SUGGEST_H

#include <stddef.h>

/* Edit distance between a and b (insertions, deletions, substitutions and transpositions
 * of neighbours each cost 1; case is ignored). Words longer than 63 characters compare as
 * far apart (a large number). */
int kb_suggest_distance(const char *a, const char *b);

/* The name of names[0..n) (n < 0: up to a NULL) closest to word - within a third of its
 * length, at least 2 edits (1 for words of 3 characters or fewer), or a name word is the
 * start of, or that starts the word, case, '-', '_' and '.' aside; the first of equals - or
 * NULL when none is that close. A leading "--" on both is ignored. */
const char *kb_suggest(const char *word, const char *const *names, int n);

#endif /* KB_SUGGEST_H */
