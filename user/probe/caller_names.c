// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "elf/demangle.h"
#include "elf/image_layers.h"
#include "probe/caller_names.h"
#include "util/array.h"

/* The kernel's dev_t inside: MINORBITS (include/linux/kdev_t.h). */
#define KDEV_MINOR_BITS	20

/* One file's functions, read once. */
struct caller_symtab {
	uint64_t dev, ino;
	bool loaded;		/* false: the file could not be read */
	struct elf_func_list funcs;
};

struct caller_names {
	struct caller_symtab *tabs;
	size_t nr, cap;
	long page_size;
};

struct caller_names *caller_names__new(void)
{
	struct caller_names *cn = calloc(1, sizeof(*cn));

	if (cn)
		cn->page_size = sysconf(_SC_PAGESIZE);
	return cn;
}

void caller_names__free(struct caller_names *cn)
{
	if (!cn)
		return;
	for (size_t i = 0; i < cn->nr; i++)
		if (cn->tabs[i].loaded)
			elf_funcs__free(&cn->tabs[i].funcs);
	free(cn->tabs);
	free(cn);
}

void caller_file_from_meta(const struct caller_meta *m, uint64_t addr, struct caller_file *out)
{
	size_t off = 0, sz = sizeof(out->path);
	uint32_t levels = m->levels < DLPROF_CALLER_LEVELS ? m->levels : DLPROF_CALLER_LEVELS;
	int n;

	memset(out, 0, sizeof(*out));
	if (m->truncated)
		off += (size_t)snprintf(out->path, sz, "/...");
	for (uint32_t i = levels; i-- > 0 && off < sz;) {
		n = snprintf(out->path + off, sz - off, "/%.*s", DLPROF_CALLER_NAME_LEN, m->names[i]);
		off += n > 0 ? (size_t)n : 0;
	}
	out->dev = makedev(m->dev >> KDEV_MINOR_BITS, m->dev & ((1u << KDEV_MINOR_BITS) - 1));
	out->ino = m->ino;
	/* vm_pgoff counts pages of the kernel's PAGE_SIZE, which is the machine's page size. */
	out->offset = addr - m->vm_start + m->vm_pgoff * (uint64_t)sysconf(_SC_PAGESIZE);
}

bool caller_file_from_maps_line(const char *line, uint64_t addr, struct caller_file *out)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8];
	int path_at = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min, &ino,
		   &path_at) < 7 || addr < start || addr >= end)
		return false;
	memset(out, 0, sizeof(*out));
	if (!ino || !path_at || line[path_at] != '/')
		return false;
	snprintf(out->path, sizeof(out->path), "%.*s", (int)strcspn(line + path_at, "\n"), line + path_at);
	out->dev = makedev(maj, min);
	out->ino = ino;
	out->offset = addr - start + off;
	return true;
}

const struct elf_func *caller_func_at(const struct elf_func_list *funcs, uint64_t ret_off)
{
	size_t lo = 0, hi = funcs->cnt;
	const struct elf_func *f;
	uint64_t at;

	if (!ret_off)
		return NULL;
	at = ret_off - 1;
	/* The last function starting at or before at. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (funcs->funcs[mid].file_offset <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	f = &funcs->funcs[lo - 1];
	return at < f->file_offset + f->size ? f : NULL;
}

/* From /proc/PID/maps: a process that still lives. */
static bool file_from_maps(uint32_t pid, uint64_t addr, struct caller_file *out)
{
	char path[64], line[4608];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = caller_file_from_maps_line(line, addr, out);
	fclose(f);
	return found;
}

/* The file is still the one that was mapped (same device and inode). */
static bool same_file(const char *path, const struct caller_file *cf)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == cf->ino && st.st_dev == cf->dev;
}

/*
 * Read the file's functions: at the captured path (the profiler's mount
 * namespace is the process's, or the path comes from the host's side of
 * an overlay), else through the process's root while it lives.
 */
static void load_symtab(struct caller_symtab *t, uint32_t pid, const struct caller_file *cf)
{
	char root_path[sizeof(cf->path) + 32], layer_path[PATH_MAX];

	snprintf(root_path, sizeof(root_path), "/proc/%" PRIu32 "/root%s", pid, cf->path);
	if (same_file(cf->path, cf))
		t->loaded = !elf_funcs__load(cf->path, &t->funcs);
	else if (same_file(root_path, cf))
		t->loaded = !elf_funcs__load(root_path, &t->funcs);
	else if (!image_layers_find(NULL, cf->path, cf->dev, cf->ino, layer_path, sizeof(layer_path)))
		t->loaded = !elf_funcs__load(layer_path, &t->funcs);
}

static struct caller_symtab *symtab_of(struct caller_names *cn, uint32_t pid, const struct caller_file *cf)
{
	struct caller_symtab *t;

	for (size_t i = 0; i < cn->nr; i++)
		if (cn->tabs[i].dev == cf->dev && cn->tabs[i].ino == cf->ino)
			return &cn->tabs[i];
	if (ARRAY_RESERVE(cn->tabs, cn->cap, cn->nr + 1))
		return NULL;
	t = &cn->tabs[cn->nr++];
	memset(t, 0, sizeof(*t));
	t->dev = cf->dev;
	t->ino = cf->ino;
	load_symtab(t, pid, cf);
	return t;
}

int caller_names__name(struct caller_names *cn, int meta_fd, uint32_t pid, uint64_t addr, char **module,
		       char **symbol)
{
	struct caller_site key = { .pid = pid, .addr = addr };
	const struct caller_symtab *t;
	const struct elf_func *f;
	struct caller_meta m;
	struct caller_file cf;
	char buf[64];
	bool known;

	known = !bpf_map_lookup_elem(meta_fd, &key, &m);
	if (known)
		caller_file_from_meta(&m, addr, &cf);
	else
		known = file_from_maps(pid, addr, &cf);
	if (!known) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		*module = strdup("?");
		*symbol = strdup(buf);
		return *module && *symbol ? 0 : -ENOMEM;
	}
	t = symtab_of(cn, pid, &cf);
	f = t && t->loaded ? caller_func_at(&t->funcs, cf.offset) : NULL;
	*module = strdup(strrchr(cf.path, '/') ? strrchr(cf.path, '/') + 1 : cf.path);
	if (f) {
		*symbol = demangle(f->name);
		if (!*symbol)
			*symbol = strdup(f->name);
	} else {
		snprintf(buf, sizeof(buf), "+0x%" PRIx64, cf.offset);
		*symbol = strdup(buf);
	}
	return *module && *symbol ? 0 : -ENOMEM;
}
