// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_search_path.h"

/* One ':'-separated entry with $ORIGIN expanded, appended to *out (a growing string); other tokens: left out. */
static int append_entry(char **out, const char *entry, size_t len, const char *origin)
{
	char *e = strndup(entry, len), *tok, *exp = NULL, *joined;
	int n;

	if (!e)
		return -ENOMEM;
	tok = strstr(e, "$ORIGIN") ?: strstr(e, "${ORIGIN}");
	if (tok) {
		size_t tlen = tok[1] == '{' ? strlen("${ORIGIN}") : strlen("$ORIGIN");

		n = asprintf(&exp, "%.*s%s%s", (int)(tok - e), e, origin, tok + tlen);
		free(e);
		if (n < 0)
			return -ENOMEM;
		e = exp;
	}
	if (strchr(e, '$') || !*e) {
		free(e);
		return 0;
	}
	n = asprintf(&joined, "%s%s%s", *out ? *out : "", *out ? ":" : "", e);
	free(e);
	if (n < 0)
		return -ENOMEM;
	free(*out);
	*out = joined;
	return 0;
}

static int expand(const char *val, const char *origin, char **out)
{
	int err = 0;

	*out = NULL;
	while (!err && val) {
		const char *end = strchr(val, ':');
		size_t len = end ? (size_t)(end - val) : strlen(val);

		err = append_entry(out, val, len, origin);
		val = end ? end + 1 : NULL;
	}
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* The raw DT_RPATH and DT_RUNPATH strings (borrowed from elf's data) of the dynamic section. */
static void dynamic_paths(Elf *elf, const char **rpath, const char **runpath)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; shdr.sh_entsize && i < shdr.sh_size / shdr.sh_entsize; i++) {
			if (!gelf_getdyn(data, (int)i, &dyn))
				break;
			if (dyn.d_tag == DT_RPATH)
				*rpath = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
			else if (dyn.d_tag == DT_RUNPATH)
				*runpath = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
		}
		return;
	}
}

int elf_search_path(const char *path, const char *origin, char **rpath, char **runpath)
{
	const char *rp = NULL, *rup = NULL;
	Elf *elf = NULL;
	int fd, err = 0;

	*rpath = *runpath = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		err = -ENOEXEC;
	if (!err)
		dynamic_paths(elf, &rp, &rup);
	/* ld.so: "If DT_RUNPATH is present, DT_RPATH is ignored." */
	if (!err && rp && !rup)
		err = expand(rp, origin, rpath);
	if (!err && rup)
		err = expand(rup, origin, runpath);
	elf_end(elf);
	close(fd);
	return err;
}
