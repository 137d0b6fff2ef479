// SPDX-License-Identifier: GPL-2.0-only
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "elf/elf_versions.h"

/* A .gnu.version entry: the version's index, and a bit for "not the default" (binutils' names). */
#define VERSYM_VERSION	0x7fff
#define VERSYM_HIDDEN	0x8000

struct elf_versions {
	Elf_Data *versym;	/* one version index per .dynsym entry */
	size_t nr_names;
	const char *names[];	/* by version index; NULL: none, or the file's base entry */
};

/*
 * Walk the .gnu.version_d entries: the largest index into *max_ndx and,
 * when v is given, the names into v->names. At most VERSYM_VERSION + 1
 * entries exist, which bounds the walk whatever a corrupt sh_info says.
 */
static int verdef_walk(Elf *elf, Elf_Data *data, const GElf_Shdr *shdr, struct elf_versions *v,
		       size_t *max_ndx)
{
	size_t off = 0;

	for (size_t n = 0; n < shdr->sh_info && n <= VERSYM_VERSION; n++) {
		GElf_Verdaux aux;
		GElf_Verdef def;
		size_t ndx;

		/* libelf takes int offsets; it checks them against the data itself. */
		if (off > INT_MAX || !gelf_getverdef(data, (int)off, &def) || !def.vd_cnt ||
		    off + def.vd_aux > INT_MAX || !gelf_getverdaux(data, (int)(off + def.vd_aux), &aux))
			return -ENOEXEC;
		ndx = def.vd_ndx & VERSYM_VERSION;
		if (ndx > *max_ndx)
			*max_ndx = ndx;
		if (v && ndx < v->nr_names && !(def.vd_flags & VER_FLG_BASE)) {
			v->names[ndx] = elf_strptr(elf, shdr->sh_link, aux.vda_name);
			if (!v->names[ndx])
				return -ENOEXEC;
		}
		if (!def.vd_next)
			break;
		off += def.vd_next;
	}
	return 0;
}

int elf_versions__read(Elf *elf, struct elf_versions **out)
{
	Elf_Data *versym = NULL, *defs = NULL;
	struct elf_versions *v;
	GElf_Shdr shdr, def_shdr;
	Elf_Scn *scn = NULL;
	size_t max_ndx = 0;
	int err;

	*out = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			return -ENOEXEC;
		if (shdr.sh_type == SHT_GNU_versym && !versym) {
			Elf_Scn *syms = elf_getscn(elf, shdr.sh_link);
			GElf_Shdr syms_shdr;

			/* Versions index the .dynsym entries, and only those. */
			if (!syms || !gelf_getshdr(syms, &syms_shdr) || syms_shdr.sh_type != SHT_DYNSYM)
				return -ENOEXEC;
			versym = elf_getdata(scn, NULL);
			if (!versym)
				return -ENOEXEC;
		} else if (shdr.sh_type == SHT_GNU_verdef && !defs) {
			defs = elf_getdata(scn, NULL);
			if (!defs)
				return -ENOEXEC;
			def_shdr = shdr;
		}
	}
	/* Without definitions every symbol is unversioned or someone else's version. */
	if (!versym || !defs)
		return 0;
	err = verdef_walk(elf, defs, &def_shdr, NULL, &max_ndx);
	if (err)
		return err;
	v = calloc(1, sizeof(*v) + (max_ndx + 1) * sizeof(v->names[0]));
	if (!v)
		return -ENOMEM;
	v->versym = versym;
	v->nr_names = max_ndx + 1;
	err = verdef_walk(elf, defs, &def_shdr, v, &max_ndx);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	return 0;
}

const char *elf_versions__hidden(const struct elf_versions *v, size_t i)
{
	GElf_Versym ver;
	size_t ndx;

	if (!v || i > INT32_MAX || !gelf_getversym(v->versym, (int)i, &ver) || !(ver & VERSYM_HIDDEN))
		return NULL;
	ndx = ver & VERSYM_VERSION;
	return ndx < v->nr_names ? v->names[ndx] : NULL;
}

void elf_versions__free(struct elf_versions *v)
{
	free(v);
}
