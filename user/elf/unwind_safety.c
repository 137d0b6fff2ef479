// SPDX-License-Identifier: GPL-2.0-only
/*
 * The graph: one node per piece of code something calls (a function entry,
 * a PLT stub, an IFUNC resolver) or per function of another library; an
 * edge per call, tail jump or fall-through into the next function. Each
 * node is read once, from its entry along every branch, stopping at
 * calls (an edge), returns and traps. A node that can start an unwind by
 * itself has its own risk; the graph then hands every caller the highest
 * risk of what it calls, until nothing changes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/code_image.h"
#include "elf/unwind_safety.h"
#include "util/array.h"
#include "util/u64_map.h"

static const char *const risk_names[UNWIND_RISK_NR] = {
	[UNWIND_RISK_NONE] = "nothing",
	[UNWIND_RISK_UNKNOWN] = "code the analysis cannot follow",
	[UNWIND_RISK_IMPORT] = "another library's code",
	[UNWIND_RISK_CALLBACK] = "a callback",
	[UNWIND_RISK_CANCEL] = "a cancellation point",
	[UNWIND_RISK_UNWINDER] = "an unwinder",
};

const char *unwind_risk_name(enum unwind_risk r)
{
	return (unsigned int)r < UNWIND_RISK_NR ? risk_names[r] : "?";
}

/*
 * What a function does wherever the analysis meets its name: one table,
 * read both ways. A risky name stays risky where the library's own code is
 * seen: glibc's cancellation points reach the unwinder only through a
 * pointer (libgcc_s, loaded on first use), which the analysis would flag
 * as a mere callback. A safe name stands only for code the analysis cannot
 * see (a call into another library); where the library defines it, its
 * code is read.
 */
#define UNWINDS(name)	{ name, UNWIND_RISK_UNWINDER, false, false }
#define CANCELS(name)	{ name, UNWIND_RISK_CANCEL, false, false }
#define SAFE(name)	{ name, UNWIND_RISK_NONE, false, false }
#define ENDS(name)	{ name, UNWIND_RISK_NONE, true, true }
#define VDSO(name)	{ name, UNWIND_RISK_NONE, true, false }
#define POSIX_SAFE(name) { name, UNWIND_RISK_NONE, true, false }

static const struct known_func {
	const char *name;
	enum unwind_risk risk;
	bool opaque;		/* as the table says, wherever it is: its code is not followed */
	bool noreturn;
} known_funcs[] = {
	/* They start an unwind: C++ throws, the unwinder's entry points, forced unwinding, backtraces. */
	UNWINDS("__cxa_throw"),
	UNWINDS("__cxa_rethrow"),
	UNWINDS("_Unwind_RaiseException"),
	UNWINDS("_Unwind_Resume"),
	UNWINDS("_Unwind_Resume_or_Rethrow"),
	UNWINDS("_Unwind_ForcedUnwind"),
	UNWINDS("_Unwind_Backtrace"),
	UNWINDS("backtrace"),
	UNWINDS("__backtrace"),
	UNWINDS("pthread_exit"),
	UNWINDS("__pthread_exit"),
	UNWINDS("__pthread_unwind"),
	UNWINDS("__pthread_unwind_next"),
	/*
	 * Cancellation points: POSIX's list of those that shall be one, and
	 * glibc's own (pthread_cancel(3)), where a pending cancellation starts
	 * the forced unwind. Aliases glibc defines at the same address (__read,
	 * __libc_read) are found through these.
	 */
	CANCELS("accept"), CANCELS("accept4"),
	CANCELS("aio_suspend"), CANCELS("clock_nanosleep"),
	CANCELS("close"), CANCELS("connect"),
	CANCELS("copy_file_range"), CANCELS("creat"),
	CANCELS("creat64"), CANCELS("epoll_pwait"),
	CANCELS("epoll_pwait2"), CANCELS("epoll_wait"),
	CANCELS("fallocate"), CANCELS("fallocate64"),
	CANCELS("fcntl"), CANCELS("fcntl64"),
	CANCELS("fdatasync"), CANCELS("fsync"),
	CANCELS("getmsg"), CANCELS("getpmsg"),
	CANCELS("lockf"), CANCELS("lockf64"),
	CANCELS("mq_receive"), CANCELS("mq_send"),
	CANCELS("mq_timedreceive"), CANCELS("mq_timedsend"),
	CANCELS("msgrcv"), CANCELS("msgsnd"),
	CANCELS("msync"), CANCELS("nanosleep"),
	CANCELS("__nanosleep"), CANCELS("open"),
	CANCELS("open64"), CANCELS("openat"),
	CANCELS("openat64"), CANCELS("pause"),
	CANCELS("poll"), CANCELS("ppoll"),
	CANCELS("pread"), CANCELS("pread64"),
	CANCELS("preadv"), CANCELS("preadv2"),
	CANCELS("pselect"), CANCELS("pthread_clockjoin_np"),
	CANCELS("pthread_cond_clockwait"), CANCELS("pthread_cond_timedwait"),
	CANCELS("pthread_cond_wait"), CANCELS("pthread_join"),
	CANCELS("pthread_testcancel"), CANCELS("__pthread_testcancel"),
	CANCELS("pthread_timedjoin_np"), CANCELS("putmsg"),
	CANCELS("putpmsg"), CANCELS("pwrite"),
	CANCELS("pwrite64"), CANCELS("pwritev"),
	CANCELS("pwritev2"), CANCELS("read"),
	CANCELS("readv"), CANCELS("recv"),
	CANCELS("recvfrom"), CANCELS("recvmmsg"),
	CANCELS("recvmsg"), CANCELS("select"),
	CANCELS("sem_clockwait"), CANCELS("sem_timedwait"),
	CANCELS("sem_wait"), CANCELS("send"),
	CANCELS("sendmmsg"), CANCELS("sendmsg"),
	CANCELS("sendto"), CANCELS("sigpause"),
	CANCELS("sigsuspend"), CANCELS("sigtimedwait"),
	CANCELS("sigwait"), CANCELS("sigwaitinfo"),
	CANCELS("sleep"), CANCELS("__syscall_cancel"),
	CANCELS("system"), CANCELS("tcdrain"),
	CANCELS("usleep"), CANCELS("wait"),
	CANCELS("wait3"), CANCELS("wait4"),
	CANCELS("waitid"), CANCELS("waitpid"),
	CANCELS("write"), CANCELS("writev"),
	/*
	 * Another library's functions taken as safe without their code: C's
	 * memory and string functions and the allocator. They take no
	 * callback, and POSIX lists none of them among the cancellation
	 * points, not even the optional ones; on glibc the analysis finds
	 * each safe (tests/elf checks it). A malloc that another library
	 * interposes is taken to keep that contract.
	 */
	SAFE("memcpy"), SAFE("memmove"),
	SAFE("memset"), SAFE("memcmp"),
	SAFE("memchr"), SAFE("strlen"),
	SAFE("strcmp"), SAFE("strncmp"),
	SAFE("strchr"), SAFE("strrchr"),
	SAFE("malloc"), SAFE("calloc"),
	SAFE("realloc"), SAFE("free"),
	SAFE("wmemcpy"), SAFE("wmemmove"),
	SAFE("wmemset"), SAFE("wmemcmp"),
	SAFE("wmemchr"), SAFE("wcslen"),
	/*
	 * They report a fatal error and abort: a function reaches them only
	 * when the process is about to die. On the way, glibc's message may go
	 * through stdio, a cancellation point: a cancellation pending at that
	 * very moment would end the thread instead, and skip the cleanup
	 * above a timed frame. That pair of events is not worth every timing
	 * of every function that checks its arguments.
	 */
	ENDS("abort"), ENDS("__assert_fail"),
	ENDS("__assert_perror_fail"), ENDS("__assert"),
	ENDS("__libc_fatal"), ENDS("__fortify_fail"),
	ENDS("__chk_fail"), ENDS("__stack_chk_fail"),
	/*
	 * Their one call through a pointer goes into the vDSO, the kernel's
	 * code mapped into each process, which calls nothing back.
	 */
	VDSO("clock_gettime"), VDSO("__clock_gettime"), VDSO("clock_getres"),
	VDSO("gettimeofday"), VDSO("__gettimeofday"), VDSO("time"),
	VDSO("getcpu"), VDSO("sched_getcpu"),
	/*
	 * POSIX forbids them to be cancellation points (they are on neither of
	 * its lists) and they take no callback; glibc waits for a contended
	 * mutex in a futex wait it shares with the cancellable waits, which a
	 * flag argument tells apart where the analysis cannot see it.
	 */
	POSIX_SAFE("pthread_mutex_lock"), POSIX_SAFE("pthread_mutex_timedlock"),
	POSIX_SAFE("pthread_mutex_clocklock"),
};

#define NR_KNOWN (sizeof(known_funcs) / sizeof(known_funcs[0]))

static const struct known_func *known_func(const char *name)
{
	for (size_t i = 0; i < NR_KNOWN; i++)
		if (!strcmp(known_funcs[i].name, name))
			return &known_funcs[i];
	return NULL;
}

const char *unwind_safe_import(size_t i)
{
	for (size_t k = 0; k < NR_KNOWN; k++)
		if (known_funcs[k].risk == UNWIND_RISK_NONE && !known_funcs[k].opaque && !i--)
			return known_funcs[k].name;
	return NULL;
}

#ifdef __x86_64__
#include "elf/disasm.h"
#include "elf/x86_dispatch.h"

/* Instructions decoded per scan, at most: libc whole is a few hundred thousand. */
#define SCAN_MAX_INSNS		4000000

enum node_kind {
	NODE_CODE,		/* code called or jumped to: read along every branch */
	NODE_RESOLVER,		/* an IFUNC resolver: what matters is each implementation it may return */
	NODE_IMPORT,		/* another library's function: only its name is known */
};

struct node {
	uint64_t addr;		/* entry (code, resolver); 0 for an import */
	const char *name;	/* a name it goes by, NULL when none is known */
	uint64_t where;		/* its own risk: the instruction that makes it */
	uint32_t via;		/* the node whose risk it took; itself for its own */
	uint8_t kind;		/* enum node_kind */
	uint8_t own;		/* enum unwind_risk, of its own code or name */
	uint8_t risk;		/* enum unwind_risk, with what it reaches */
	bool read;
	bool noreturn;		/* known not to return (known_funcs) */
	bool in_init;		/* called by once_only's caller: may hold its one-time initialization */
};

struct edge {
	uint32_t from, to;
	bool once;		/* a call that cannot happen with a second thread (once_only) */
};

struct unwind_scan {
	const struct code_image *ci;
	struct disasm d;
	cs_insn *peek;			/* a second instruction, for a look at a call's target */
	struct node *nodes;
	size_t nr_nodes, cap_nodes;
	struct u64_map node_of;		/* node_key() -> index */
	struct edge *edges;
	size_t nr_edges, cap_edges;
	struct u64_map edge_of;		/* from << 32 | to -> index */
	struct u64_map decoded;		/* instruction address -> the node that read it last */
	uint64_t *todo;			/* branch targets still to read, of the node being read */
	size_t nr_todo, cap_todo;
	struct insn_run run;		/* the straight run that ends at the current instruction */
	bool sweeping;			/* reading a whole function, instruction after instruction */
	size_t budget;
	int err;			/* sticky -ENOMEM */
};

#define KEY_RESOLVER	(1ull << 62)
#define KEY_IMPORT	(1ull << 63)

static uint64_t node_key(enum node_kind kind, uint64_t addr, const char *name)
{
	switch (kind) {
	case NODE_RESOLVER: return addr | KEY_RESOLVER;
	case NODE_IMPORT: return (uint64_t)(uintptr_t)name | KEY_IMPORT;
	default: return addr;
	}
}

static void set_own(struct unwind_scan *u, size_t idx, enum unwind_risk r, uint64_t where)
{
	struct node *n = &u->nodes[idx];

	if (r <= n->own)
		return;
	n->own = n->risk = (uint8_t)r;
	n->via = (uint32_t)idx;
	n->where = where;
}

/* The entry of known_funcs that says most about code going by names[0..nr). */
static const struct known_func *known_of_names(const char *const *names, size_t nr)
{
	const struct known_func *k = NULL;

	for (size_t i = 0; i < nr && (!k || !k->risk); i++) {
		const struct known_func *kn = known_func(names[i]);

		if (kn && (!k || kn->risk > k->risk))
			k = kn;
	}
	return k;
}

/*
 * A new node's own risk where its name or place tells it before its code
 * does. A node known by name is not read (known_funcs), nor is one outside
 * the code.
 */
static void node_init(struct unwind_scan *u, size_t idx, const char *name)
{
	struct node *n = &u->nodes[idx];
	const struct known_func *k;
	const char *names[8];
	size_t nr = 0;

	if (n->kind == NODE_CODE) {
		nr = code_image_names(u->ci, n->addr, names, 8);
		nr = nr > 8 ? 8 : nr;
		k = known_of_names(names, nr);
		n->name = k ? k->name : nr ? names[0] : NULL;
	} else {
		k = name ? known_func(name) : NULL;
		n->name = name;
	}
	n->noreturn = k && k->noreturn;
	if (n->kind == NODE_IMPORT) {
		set_own(u, idx, k ? k->risk : UNWIND_RISK_IMPORT, 0);
		n->read = true;
	} else if (k && (k->risk || k->opaque)) {
		set_own(u, idx, k->risk, n->addr);
		n->read = true;
	} else if (n->kind == NODE_CODE && !code_image_is_code(u->ci, n->addr)) {
		set_own(u, idx, UNWIND_RISK_UNKNOWN, n->addr);
		n->read = true;
	}
}

/* The node for this code, resolver or import, made on first sight. SIZE_MAX: out of memory. */
static size_t node_get(struct unwind_scan *u, enum node_kind kind, uint64_t addr, const char *name)
{
	uint64_t key = node_key(kind, addr, name);
	size_t idx;

	if (!u64_map_get(&u->node_of, key, &idx))
		return idx;
	if (u->err || u->nr_nodes >= UINT32_MAX || ARRAY_RESERVE(u->nodes, u->cap_nodes, u->nr_nodes + 1) ||
	    u64_map_put(&u->node_of, key, u->nr_nodes)) {
		u->err = -ENOMEM;
		return SIZE_MAX;
	}
	idx = u->nr_nodes++;
	u->nodes[idx] = (struct node){ .addr = addr, .kind = (uint8_t)kind, .via = (uint32_t)idx };
	node_init(u, idx, name);
	return idx;
}

static void edge_add(struct unwind_scan *u, size_t from, size_t to)
{
	uint64_t key = (uint64_t)from << 32 | to;
	size_t ignored;

	if (to == SIZE_MAX || from == to || !u64_map_get(&u->edge_of, key, &ignored))
		return;
	if (ARRAY_RESERVE(u->edges, u->cap_edges, u->nr_edges + 1) ||
	    u64_map_put(&u->edge_of, key, u->nr_edges)) {
		u->err = -ENOMEM;
		return;
	}
	u->edges[u->nr_edges++] = (struct edge){ .from = (uint32_t)from, .to = (uint32_t)to };
}

static void todo_push(struct unwind_scan *u, uint64_t addr)
{
	if (ARRAY_RESERVE(u->todo, u->cap_todo, u->nr_todo + 1)) {
		u->err = -ENOMEM;
		return;
	}
	u->todo[u->nr_todo++] = addr;
}

/* The targets of a switch's table go on the todo list. */
static void table_follow(struct unwind_scan *u, size_t idx, const struct jump_table *t, uint64_t where)
{
	size_t avail;
	const uint8_t *p = code_image_data(u->ci, t->table, &avail);

	if (!p || t->cases > SWITCH_MAX_CASES || avail / 4 < t->cases) {
		set_own(u, idx, UNWIND_RISK_UNKNOWN, where);
		return;
	}
	for (uint64_t c = 0; c < t->cases; c++) {
		int32_t rel;
		uint64_t to;

		memcpy(&rel, p + 4 * c, sizeof(rel));
		to = t->table + (uint64_t)(int64_t)rel;
		if (!code_image_is_code(u->ci, to)) {
			set_own(u, idx, UNWIND_RISK_UNKNOWN, where);
			return;
		}
		todo_push(u, to);
	}
}

static void sweep(struct unwind_scan *u, size_t idx, uint64_t begin, uint64_t end);

/* A jump through register jreg at where (x86_dispatch.h): false when it goes anywhere. */
static bool jump_follow(struct unwind_scan *u, size_t idx, unsigned int jreg, uint64_t where)
{
	const struct fde_range *f = code_image_fde(u->ci, where);
	struct jump_table t;

	switch (insn_run_jump(&u->run, jreg, f, &t)) {
	case JUMP_TABLE:
		table_follow(u, idx, &t, where);
		return true;
	case JUMP_IN_FUNCTION:
		/* Inside a sweep of that function already, every instruction there is read. */
		if (!u->sweeping)
			sweep(u, idx, f->begin, f->end);
		return true;
	default:
		return false;
	}
}

/* A call or jump through the pointer slot at slot: an edge to what the dynamic linker puts there. */
static size_t through_slot(struct unwind_scan *u, size_t idx, uint64_t slot, uint64_t where)
{
	size_t to = SIZE_MAX;
	struct code_slot s;

	code_image_slot(u->ci, slot, &s);
	switch (s.kind) {
	case SLOT_SYMBOL:
		to = s.defined ? node_get(u, NODE_CODE, s.value, NULL) : node_get(u, NODE_IMPORT, 0, s.name);
		break;
	case SLOT_IFUNC:
		to = node_get(u, NODE_RESOLVER, s.value, s.name);
		break;
	case SLOT_LOCAL:
		to = node_get(u, NODE_CODE, s.value, NULL);
		break;
	default:
		set_own(u, idx, UNWIND_RISK_CALLBACK, where);
		return SIZE_MAX;
	}
	edge_add(u, idx, to);
	return to;
}

/*
 * An IFUNC resolver's instruction: each code address it loads (lea, or a
 * GOT slot's function) is an implementation it may return, an edge. A
 * resolver returns one of them; one that calls, jumps through a pointer
 * or reads a pointer from memory with no relocation may return anything.
 * false: the resolver ends there.
 */
static bool resolver_insn(struct unwind_scan *u, size_t idx, const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	struct code_slot s;
	uint64_t at;

	if (disasm_in_group(insn, CS_GRP_CALL) ||
	    (insn->id == X86_INS_JMP && x->op_count && x->operands[0].type != X86_OP_IMM)) {
		set_own(u, idx, UNWIND_RISK_UNKNOWN, insn->address);
		return false;
	}
	if (x->op_count != 2 || !x86_rip_target(&x->operands[1], insn->address, insn->size, &at))
		return true;
	if (insn->id == X86_INS_LEA) {
		if (code_image_is_code(u->ci, at))
			edge_add(u, idx, node_get(u, NODE_CODE, at, NULL));
		return true;
	}
	if (insn->id != X86_INS_MOV)
		return true;
	code_image_slot(u->ci, at, &s);
	switch (s.kind) {
	case SLOT_SYMBOL:
		if (s.defined && code_image_is_code(u->ci, s.value))
			edge_add(u, idx, node_get(u, NODE_CODE, s.value, NULL));
		else if (!s.defined && s.func)
			edge_add(u, idx, node_get(u, NODE_IMPORT, 0, s.name));
		return true;	/* else data: the CPU's features, say */
	case SLOT_LOCAL:
		if (code_image_is_code(u->ci, s.value))
			edge_add(u, idx, node_get(u, NODE_CODE, s.value, NULL));
		return true;
	case SLOT_IFUNC:
		edge_add(u, idx, node_get(u, NODE_RESOLVER, s.value, s.name));
		return true;
	default:
		set_own(u, idx, UNWIND_RISK_UNKNOWN, insn->address);
		return false;
	}
}

/* Has the node read the instruction at addr already? Marks it read if not. */
static bool decoded_by(struct unwind_scan *u, uint64_t addr, size_t idx)
{
	size_t last;

	if (!u64_map_get(&u->decoded, addr, &last) && last == idx)
		return true;
	if (u64_map_put(&u->decoded, addr, idx))
		u->err = -ENOMEM;
	return false;
}

/*
 * Does a call at insn end its function? Compiled code puts nothing after a
 * call that does not return (abort, __stack_chk_fail, __cxa_throw): its
 * FDE ends there. Anything else falls through.
 */
static bool call_ends_function(const struct unwind_scan *u, const cs_insn *insn)
{
	const struct fde_range *f = code_image_fde(u->ci, insn->address);

	return f && insn->address + insn->size == f->end;
}

enum flow { FLOW_NEXT, FLOW_END };

/*
 * Is the code at addr a PLT entry, a jump through the GOT slot *slot
 * (after endbr64 where IBT puts one)? Calls to it are then calls to what
 * the slot holds: an import, or this library's own function.
 */
static bool plt_slot(struct unwind_scan *u, uint64_t addr, uint64_t *slot)
{
	for (int i = 0; i < 2; i++) {
		size_t avail;
		const uint8_t *p = code_image_code(u->ci, addr, &avail);
		uint64_t a = addr;

		if (avail > X86_INSN_MAX)
			avail = X86_INSN_MAX;
		if (!p || !cs_disasm_iter(u->d.handle, &p, &avail, &a, u->peek))
			return false;
		if (u->peek->id == X86_INS_JMP && u->peek->detail->x86.op_count == 1)
			return x86_rip_target(&u->peek->detail->x86.operands[0], u->peek->address, u->peek->size, slot);
		if (u->peek->id != X86_INS_ENDBR64)
			return false;
		addr += u->peek->size;
	}
	return false;
}

/* A call or jump in code: the edges and branch targets it makes. */
static enum flow code_branch(struct unwind_scan *u, size_t idx, const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->op_count ? &x->operands[0] : NULL;
	bool call = disasm_in_group(insn, CS_GRP_CALL), jmp = insn->id == X86_INS_JMP;
	size_t to = SIZE_MAX;
	uint64_t at, slot;

	if (insn->id == X86_INS_LJMP || insn->id == X86_INS_LCALL || !op) {
		set_own(u, idx, UNWIND_RISK_UNKNOWN, insn->address);
		return FLOW_END;
	}
	if (op->type == X86_OP_IMM) {
		at = (uint64_t)op->imm;
		if (!code_image_is_code(u->ci, at)) {
			set_own(u, idx, UNWIND_RISK_UNKNOWN, insn->address);
			return FLOW_END;
		}
		if (call && plt_slot(u, at, &slot)) {
			to = through_slot(u, idx, slot, insn->address);
		} else if (call) {
			to = node_get(u, NODE_CODE, at, NULL);
			edge_add(u, idx, to);
		} else {
			todo_push(u, at);	/* a jump into another function becomes an edge when read */
		}
	} else if (x86_rip_target(op, insn->address, insn->size, &at) && (call || jmp)) {
		to = through_slot(u, idx, at, insn->address);
	} else if (jmp && op->type == X86_OP_REG && jump_follow(u, idx, op->reg, insn->address)) {
		/* the targets are on the todo list, or read */
	} else {
		set_own(u, idx, UNWIND_RISK_CALLBACK, insn->address);
		return FLOW_END;
	}
	if (jmp)
		return FLOW_END;
	/* Nothing follows a call that does not return: what lies there is other code (a landing pad). */
	if (call && ((to != SIZE_MAX && u->nodes[to].noreturn) || call_ends_function(u, insn)))
		return FLOW_END;
	return FLOW_NEXT;
}

/* One instruction of node idx: what follows it in a straight line, if anything. */
static enum flow step(struct unwind_scan *u, size_t idx, const cs_insn *insn)
{
	bool resolver = u->nodes[idx].kind == NODE_RESOLVER;

	switch (insn->id) {
	case X86_INS_RET:
		if (insn_run_ret_jumps(&u->run))
			set_own(u, idx, UNWIND_RISK_CALLBACK, insn->address);
		return FLOW_END;
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_INT3:
	case X86_INS_UD2:
	case X86_INS_HLT:
		return FLOW_END;
	default:
		break;
	}
	if (resolver && !resolver_insn(u, idx, insn))
		return FLOW_END;
	/* A resolver's jumps (direct: resolver_insn took the others) stay in it. */
	if (resolver && insn->id == X86_INS_JMP) {
		todo_push(u, (uint64_t)insn->detail->x86.operands[0].imm);
		return FLOW_END;
	}
	if (disasm_in_group(insn, CS_GRP_CALL) || insn->id == X86_INS_JMP || insn->id == X86_INS_LJMP)
		return code_branch(u, idx, insn);
	if (disasm_in_group(insn, CS_GRP_JUMP)) {
		const cs_x86 *x = &insn->detail->x86;

		/* A conditional branch: both ways. */
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
			todo_push(u, (uint64_t)x->operands[0].imm);
		else
			set_own(u, idx, UNWIND_RISK_UNKNOWN, insn->address);
	}
	return FLOW_NEXT;
}

/*
 * Decode the instruction of node idx at addr into u->d.insn: 1, or 0 for
 * a VEX/EVEX or PKRU instruction capstone 4 does not know (no branch:
 * *len is its length), or -1 when the analysis cannot go on there (the
 * node's own risk is then set).
 */
static int decode(struct unwind_scan *u, size_t idx, uint64_t addr, size_t *len)
{
	const uint8_t *p = code_image_code(u->ci, addr, len);
	size_t avail = *len > X86_INSN_MAX ? X86_INSN_MAX : *len, other;
	uint64_t a = addr;

	if (!p || !u->budget) {
		set_own(u, idx, UNWIND_RISK_UNKNOWN, addr);
		return -1;
	}
	u->budget--;
	other = x86_uncommon_insn_len(p, avail);
	if (!cs_disasm_iter(u->d.handle, &p, &avail, &a, u->d.insn)) {
		*len = other;
		if (!other)
			set_own(u, idx, UNWIND_RISK_UNKNOWN, addr);
		return other ? 0 : -1;
	}
	/* Both decoders must agree on where the next instruction starts. */
	if (other && other != u->d.insn->size) {
		set_own(u, idx, UNWIND_RISK_UNKNOWN, addr);
		return -1;
	}
	*len = u->d.insn->size;
	insn_run_add(&u->run, u->d.handle, u->d.insn);
	return 1;
}

/* The straight line of node idx's code from addr, until it ends, branches away or meets read code. */
static void read_run(struct unwind_scan *u, size_t idx, uint64_t addr)
{
	insn_run_clear(&u->run);
	while (!u->err && !u->nodes[idx].own) {
		size_t len;
		int got;

		if (decoded_by(u, addr, idx))
			return;
		/* Into another function: a tail call, or a fall-through; resolvers are read inline. */
		if (addr != u->nodes[idx].addr && u->nodes[idx].kind == NODE_CODE && code_image_is_start(u->ci, addr)) {
			edge_add(u, idx, node_get(u, NODE_CODE, addr, NULL));
			return;
		}
		got = decode(u, idx, addr, &len);
		if (got < 0)
			return;
		/* No branch in what capstone cannot decode: no run to match a dispatch across either. */
		if (!got)
			insn_run_clear(&u->run);
		else if (step(u, idx, u->d.insn) == FLOW_END)
			return;
		addr += len;
	}
}

/*
 * Every instruction of [begin, end), one after the other, as reachable
 * (a function whose computed jumps land anywhere in it). Its calls and
 * branches out are followed as read_run's are.
 */
static void sweep(struct unwind_scan *u, size_t idx, uint64_t begin, uint64_t end)
{
	uint64_t addr = begin;

	u->sweeping = true;
	insn_run_clear(&u->run);
	while (addr < end && !u->err && !u->nodes[idx].own) {
		size_t len;
		int got;

		decoded_by(u, addr, idx);
		got = decode(u, idx, addr, &len);
		if (got < 0)
			break;
		/* Past a return or a jump, the next instruction starts another path. */
		if (!got || step(u, idx, u->d.insn) == FLOW_END)
			insn_run_clear(&u->run);
		addr += len;
	}
	u->sweeping = false;
}

static void read_node(struct unwind_scan *u, size_t idx)
{
	size_t before = u->nr_edges;

	u->nodes[idx].read = true;
	u->nr_todo = 0;
	todo_push(u, u->nodes[idx].addr);
	while (u->nr_todo && !u->err && !u->nodes[idx].own)
		read_run(u, idx, u->todo[--u->nr_todo]);
	/* A resolver that loads no implementation returns one the analysis does not see. */
	if (u->nodes[idx].kind == NODE_RESOLVER && u->nr_edges == before)
		set_own(u, idx, UNWIND_RISK_UNKNOWN, u->nodes[idx].addr);
}

/* Does the node go by this name (any of the symbols at its address)? */
static bool node_named(const struct unwind_scan *u, size_t idx, const char *name)
{
	const struct node *n = &u->nodes[idx];
	const char *names[8];
	size_t nr;

	if (n->kind != NODE_CODE)
		return n->name && !strcmp(n->name, name);
	nr = code_image_names(u->ci, n->addr, names, 8);
	for (size_t i = 0; i < nr && i < 8; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/*
 * Calls that run once per process, before it can have a second thread,
 * so that nothing can cancel it or be pending when they do: what they
 * reach is not followed. glibc's malloc initializes at the first
 * allocation, which precedes the first thread (pthread_create allocates):
 * it reads its tunables through ld.so's __tunable_get_val, whose callbacks
 * set malloc's parameters, and (before 2.37, glibc bug 29624) draws
 * tcache's key with getrandom, a cancellation point. Any function malloc's
 * family calls directly may hold that initialization: its calls to these
 * are not followed.
 */
static const char *const once_callers[] = { "malloc", "calloc", "realloc", "memalign", "aligned_alloc",
					    "posix_memalign", "valloc", "pvalloc" };
static const char *const once_callees[] = { "getrandom", "__tunable_get_val" };

static void mark_once_only(struct unwind_scan *u)
{
	for (size_t i = 0; i < u->nr_edges; i++)
		for (size_t k = 0; k < sizeof(once_callers) / sizeof(once_callers[0]); k++)
			if (node_named(u, u->edges[i].from, once_callers[k]))
				u->nodes[u->edges[i].to].in_init = true;
	for (size_t i = 0; i < u->nr_edges; i++)
		for (size_t k = 0; k < sizeof(once_callees) / sizeof(once_callees[0]); k++)
			u->edges[i].once |= u->nodes[u->edges[i].from].in_init &&
					    node_named(u, u->edges[i].to, once_callees[k]);
}

/* Every caller gets the highest risk of what it calls, until nothing changes. */
static void propagate(struct unwind_scan *u)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = 0; i < u->nr_edges; i++) {
			struct node *from = &u->nodes[u->edges[i].from];
			const struct node *to = &u->nodes[u->edges[i].to];

			if (to->risk > from->risk && !u->edges[i].once) {
				from->risk = to->risk;
				from->via = u->edges[i].to;
				changed = true;
			}
		}
	}
}

int unwind_scan__new(const struct code_image *ci, struct unwind_scan **out)
{
	struct unwind_scan *u = calloc(1, sizeof(*u));
	int err;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	err = disasm_open(&u->d);
	if (err) {
		free(u);
		return err;
	}
	u->peek = cs_malloc(u->d.handle);
	if (!u->peek) {
		unwind_scan__free(u);
		return -ENOMEM;
	}
	u->ci = ci;
	u->budget = SCAN_MAX_INSNS;
	*out = u;
	return 0;
}

void unwind_scan__free(struct unwind_scan *u)
{
	if (!u)
		return;
	if (u->peek)
		cs_free(u->peek, 1);
	disasm_close(&u->d);
	free(u->nodes);
	free(u->edges);
	free(u->todo);
	u64_map_free(&u->node_of);
	u64_map_free(&u->edge_of);
	u64_map_free(&u->decoded);
	free(u);
}

/* Read every node not read yet (those found while reading are appended), then hand the risks up. */
static int settle(struct unwind_scan *u)
{
	for (size_t k = 0; k < u->nr_nodes && !u->err; k++)
		if (!u->nodes[k].read)
			read_node(u, k);
	if (u->err)
		return u->err;
	mark_once_only(u);
	propagate(u);
	return 0;
}

int unwind_scan__judge(struct unwind_scan *u, const uint64_t *entries, size_t n, enum unwind_risk *risks)
{
	size_t *roots = malloc((n + 1) * sizeof(*roots));
	int err;

	if (!roots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		roots[i] = node_get(u, NODE_CODE, entries[i], NULL);
	err = settle(u);
	for (size_t i = 0; i < n && !err; i++)
		risks[i] = (enum unwind_risk)u->nodes[roots[i]].risk;
	free(roots);
	return err;
}

int unwind_scan__judge_ifunc(struct unwind_scan *u, uint64_t resolver, enum unwind_risk *risk)
{
	size_t idx = node_get(u, NODE_RESOLVER, resolver, NULL);
	int err = settle(u);

	if (!err)
		*risk = (enum unwind_risk)u->nodes[idx].risk;
	return err;
}

/* What makes o risky, in words: self when o is the function asked about. */
static void describe(const struct node *o, bool self, char *buf, size_t sz)
{
	const char *in = o->name && !self ? " in " : "";
	const char *name = o->name && !self ? o->name : "";

	switch (o->own) {
	case UNWIND_RISK_UNWINDER:
		snprintf(buf, sz, self ? "starts an unwind" : "calls %s, which starts an unwind", o->name);
		break;
	case UNWIND_RISK_CANCEL:
		snprintf(buf, sz, self ? "is a cancellation point" : "calls %s, a cancellation point", o->name);
		break;
	case UNWIND_RISK_IMPORT:
		snprintf(buf, sz, "calls %s, in another library", o->name);
		break;
	case UNWIND_RISK_CALLBACK:
		snprintf(buf, sz, "calls through a pointer at 0x%" PRIx64 "%s%s", o->where, in, name);
		break;
	default:
		snprintf(buf, sz, "reaches code at 0x%" PRIx64 "%s%s that the analysis cannot follow", o->where,
			 in, name);
		break;
	}
}

void unwind_scan__why(const struct unwind_scan *u, uint64_t entry, char *buf, size_t sz)
{
	size_t idx, root;

	if (!sz)
		return;
	buf[0] = '\0';
	if (u64_map_get(&u->node_of, node_key(NODE_CODE, entry, NULL), &idx) || !u->nodes[idx].risk)
		return;
	root = idx;
	/* Each step of the chain raised a risk: it ends, at most once round the nodes. */
	for (size_t steps = 0; u->nodes[idx].via != idx && steps < u->nr_nodes; steps++)
		idx = u->nodes[idx].via;
	describe(&u->nodes[idx], idx == root, buf, sz);
}

#else /* !__x86_64__ */

struct unwind_scan {
	int unused;
};

int unwind_scan__new(const struct code_image *ci, struct unwind_scan **out)
{
	(void)ci;
	*out = NULL;
	return -EOPNOTSUPP;
}

void unwind_scan__free(struct unwind_scan *u)
{
	(void)u;
}

int unwind_scan__judge(struct unwind_scan *u, const uint64_t *entries, size_t n, enum unwind_risk *risks)
{
	(void)u;
	(void)entries;
	(void)n;
	(void)risks;
	return -EOPNOTSUPP;
}

int unwind_scan__judge_ifunc(struct unwind_scan *u, uint64_t resolver, enum unwind_risk *risk)
{
	(void)u;
	(void)resolver;
	(void)risk;
	return -EOPNOTSUPP;
}

void unwind_scan__why(const struct unwind_scan *u, uint64_t entry, char *buf, size_t sz)
{
	(void)u;
	(void)entry;
	if (sz)
		buf[0] = '\0';
}

#endif /* __x86_64__ */
