/* fake_cubin.c - parse a CUBIN for the driver double (see fake_cubin.h). */
#include "fake_cubin.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EM_CUDA_MACHINE 190
#define IMAGE_MAX (256u << 20)   /* a sanity bound on offsets: no kbench module is this big */

const fake_entry *fake_cubin_entry(const fake_image *img, const char *name)
{
    for (int i = 0; i < img->n_entries; i++)
        if (!strcmp(img->entries[i].name, name))
            return &img->entries[i];
    return NULL;
}

static const char *sec_name(const unsigned char *p, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, int i)
{
    const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
    return (const char *)p + strs->sh_offset + sh[i].sh_name;
}

/* "release 13.0" in the toolkit note: the major, else 0. */
static int toolkit_major(const unsigned char *p, const Elf64_Shdr *s)
{
    const char *b = (const char *)p + s->sh_offset;
    for (size_t i = 0; i + 8 < s->sh_size; i++)
        if (!memcmp(b + i, "release ", 8))
            return atoi(b + i + 8);
    return 0;
}

/* Walk one .nv.info.<entry> section: records are {u8 format, u8 attribute, then either a
 * u16 value (format 3) or a u16 size and that many bytes (format 4)}. */
static void read_info(const unsigned char *b, size_t n, fake_entry *e)
{
    size_t i = 0;
    e->n_params = 0;
    while (i + 4 <= n) {
        unsigned fmt = b[i], attr = b[i + 1];
        unsigned v16 = (unsigned)b[i + 2] | (unsigned)b[i + 3] << 8;
        const unsigned char *data = b + i + 4;
        size_t len = fmt == 4 ? v16 : 0;
        if (fmt != 3 && fmt != 4 && fmt != 1 && fmt != 2)
            break;
        if (i + 4 + len > n)
            break;
        if (attr == 0x19 && fmt == 3)
            e->param_bytes = (int)v16;
        else if (attr == 0x17 && len >= 12) {
            uint16_t ordinal, offset;
            uint32_t flags;
            memcpy(&ordinal, data + 4, sizeof ordinal);
            memcpy(&offset, data + 6, sizeof offset);
            memcpy(&flags, data + 8, sizeof flags);
            if (ordinal < FAKE_MAX_PARAMS) {
                e->param_size[ordinal] = (int)(flags >> 18);
                e->param_offset[ordinal] = (int)offset;
            }
            e->n_params++;
        }
        else if (attr == 0x0a && len >= 8) {
            uint16_t offset;
            memcpy(&offset, data + 4, sizeof offset);
            e->param_cbank = (int)offset;
        }
        else if (attr == 0x05 && len >= 12) {
            uint32_t t[3];
            memcpy(t, data, sizeof t);
            e->max_threads = (int)(t[0] * t[1] * t[2]);
        }
        i += 4 + len;
    }
}

/* .nv.compat holds records as .nv.info does; {format 2 (a byte value), attribute 0x09} says
 * whether the image is arch-specific (fake_cubin.h). */
static int read_specific(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i + 4 <= n;) {
        unsigned fmt = b[i], attr = b[i + 1];
        size_t len = fmt == 4 ? ((size_t)b[i + 2] | (size_t)b[i + 3] << 8) : 0;
        if (fmt == 2 && attr == 0x09)
            return b[i + 2] != 0;
        if (fmt < 1 || fmt > 4 || i + 4 + len > n)
            break;
        i += 4 + len;
    }
    return 0;
}

/* The global .nv.info holds EIATTR_REGCOUNT (0x2f) records {u32 symbol index, u32 count}. */
static void read_regcounts(const unsigned char *p, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                           const Elf64_Shdr *info, fake_image *img)
{
    const Elf64_Shdr *symtab = NULL;
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_SYMTAB && sh[i].sh_link < eh->e_shnum)
            symtab = &sh[i];
    if (!symtab)
        return;
    const Elf64_Sym *syms = (const Elf64_Sym *)(p + symtab->sh_offset);
    size_t n_syms = symtab->sh_size / sizeof *syms;
    const char *names = (const char *)p + sh[symtab->sh_link].sh_offset;
    const unsigned char *b = p + info->sh_offset;
    for (size_t i = 0; i + 4 <= info->sh_size;) {
        unsigned fmt = b[i], attr = b[i + 1], len = fmt == 4 ? ((unsigned)b[i + 2] | (unsigned)b[i + 3] << 8) : 0;
        if (attr == 0x2f && len == 8 && i + 12 <= info->sh_size) {
            uint32_t v[2];
            memcpy(v, b + i + 4, sizeof v);
            fake_entry *e = v[0] < n_syms ? (fake_entry *)fake_cubin_entry(img, names + syms[v[0]].st_name) : NULL;
            if (e)
                e->regs = (int)v[1];
        }
        i += 4 + len;
    }
}

static fake_entry *entry_named(fake_image *img, const char *name)
{
    for (int i = 0; i < img->n_entries; i++)
        if (!strcmp(img->entries[i].name, name))
            return &img->entries[i];
    if (img->n_entries == FAKE_MAX_ENTRIES || strlen(name) >= sizeof img->entries[0].name)
        return NULL;
    fake_entry *e = &img->entries[img->n_entries++];
    memset(e, 0, sizeof *e);
    strcpy(e->name, name);
    e->param_bytes = e->n_params = e->regs = -1;
    e->max_threads = 1024;
    return e;
}

int fake_cubin_parse(const void *image, fake_image *out)
{
    const unsigned char *p = image;
    const Elf64_Ehdr *eh = image;
    memset(out, 0, sizeof *out);
    if (!p || memcmp(p, ELFMAG, SELFMAG) != 0 || p[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_CUDA_MACHINE)
        return -1;
    if (eh->e_shoff == 0 || eh->e_shoff > IMAGE_MAX || eh->e_shnum == 0 || eh->e_shstrndx >= eh->e_shnum)
        return -1;
    unsigned abi = p[EI_ABIVERSION];
    out->sm = (int)(abi >= 8 ? (eh->e_flags >> 8) & 0xff : eh->e_flags & 0xff);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(p + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_offset > IMAGE_MAX || sh[i].sh_size > IMAGE_MAX)
            return -1;
    /* entries first (their .text.<name>), then what other sections say about them */
    for (int i = 0; i < eh->e_shnum; i++) {
        const char *nm = sec_name(p, eh, sh, i);
        if (!strncmp(nm, ".text.", 6) && !entry_named(out, nm + 6))
            return -1;
    }
    for (int i = 0; i < eh->e_shnum; i++) {
        const char *nm = sec_name(p, eh, sh, i);
        fake_entry *e;
        if (!strcmp(nm, ".note.nv.tkinfo"))
            out->toolkit_major = toolkit_major(p, &sh[i]);
        else if (!strcmp(nm, ".nv.compat"))
            out->specific = read_specific(p + sh[i].sh_offset, sh[i].sh_size);
        else if (!strncmp(nm, ".nv.info.", 9) && (e = (fake_entry *)fake_cubin_entry(out, nm + 9)) != NULL)
            read_info(p + sh[i].sh_offset, sh[i].sh_size, e);
        else if (!strncmp(nm, ".nv.shared.", 11) && (e = (fake_entry *)fake_cubin_entry(out, nm + 11)) != NULL)
            /* observed with NVRTC/nvcc 13.0: for sm_90 and later the section also holds the
             * 1 KiB of system-reserved shared memory, which the attribute (and ptxas's
             * "bytes smem") leaves out */
            e->static_shmem = (int)sh[i].sh_size - (out->sm >= 90 && sh[i].sh_size >= 1024 ? 1024 : 0);
        else if (!strcmp(nm, ".nv.info"))
            read_regcounts(p, eh, sh, &sh[i], out);
    }
    return out->sm > 0 ? 0 : -1;
}
