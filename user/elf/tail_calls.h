/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Can a jump through a register or memory land in a function's head, the
 * bytes a moved entry probe skips and the instruction it moves onto? A jump
 * there would run the skipped bytes again and fire the entry probe with
 * something other than the return address on top of the stack. Most such
 * jumps are tail calls through a pointer (`add $8,%rsp; jmp *%rax`): they
 * leave the function with the stack as at its entry.
 */
#ifndef DLPROF_TAIL_CALLS_H
#define DLPROF_TAIL_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/disasm.h"

/*
 * *leave: whether every indirect jmp of the function code[0..size) is a tail
 * call: made with %rsp back at its entry level, through a value that cannot
 * be an address of the head (entry, entry + head]. jmp *sym(%rip), a
 * pointer the function cannot write, counts as one whatever the stack.
 *
 * %rsp is followed from the entry through every direct branch: push, pop,
 * add, sub, lea, leave, copies to and from other registers; anything else
 * that writes it, or two paths that disagree, makes it unknown. A value
 * may be a head address when it comes from a %rip-relative lea of one, a
 * load through an index register (a table), a load after such a value was
 * stored or passed to a call, or arithmetic on any of those. A jump the
 * walk does not reach, a branch into the middle of an instruction, an
 * undecodable byte or a function of more than a bound of instructions all
 * give false. Returns 0 or -ENOMEM.
 */
int tail_calls_only(struct disasm *d, const uint8_t *code, size_t size, uint32_t head, bool *leave);

#endif /* DLPROF_TAIL_CALLS_H */
