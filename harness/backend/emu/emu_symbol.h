/* emu_symbol.h - a code address of a kernel module as a person reads it:
 * "attn_mma at kernels/attention.cu:512" (addr2line on the module, which checked builds
 * compile with -g), else "attn_mma+0x1c4 in <module>" (dladdr), else the address. */
#ifndef KB_EMU_SYMBOL_H
#define KB_EMU_SYMBOL_H

#include <stddef.h>

/* Describe pc into buf (always NUL-terminated). Slow (it may run addr2line): for reports. */
void kb_emu_symbolize(const void *pc, char *buf, size_t n);

#endif /* KB_EMU_SYMBOL_H */
