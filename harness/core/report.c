/* report.c - the reporting hook (see report.h). */
#include "core/report.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const words[] = {
    [KB_REPORT_INFO] = "",
    [KB_REPORT_NOTE] = "note: ",
    [KB_REPORT_WARNING] = "warning: ",
    [KB_REPORT_ERROR] = "",
};
_Static_assert(sizeof words / sizeof words[0] == KB_REPORT_LEVEL_COUNT, "words out of sync with kb_report_level");

const char *kb_report_word(kb_report_level level)
{
    return (unsigned)level < KB_REPORT_LEVEL_COUNT ? words[level] : "";
}

static kb_report_fn hook;
static void *hook_user;

void kb_report_set(kb_report_fn fn, void *user)
{
    hook = fn;
    hook_user = user;
}

void kb_report(kb_report_level level, const char *fmt, ...)
{
    char msg[4096];   /* on the stack: kb_out_of_memory reports through here */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (hook)
        hook(hook_user, level, msg);
    else
        fprintf(stderr, "kbench: %s%s\n", kb_report_word(level), msg);
}
