/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A full-screen terminal with plain ANSI escapes (what any terminal and
 * ssh carry): the alternate screen, the cursor hidden, keys read one by one
 * without echo; everything put back on leave.
 */
#ifndef DLPROF_TERM_SCREEN_H
#define DLPROF_TERM_SCREEN_H

#include <stdbool.h>
#include <stdio.h>
#include <termios.h>

struct term_screen {
	int in_fd;		/* the keys (a tty) */
	FILE *out;		/* the screen (a tty) */
	struct termios saved;	/* the input's settings before enter */
	bool active;
};

/* 0, or -errno (-ENOTTY: in_fd or out is not a terminal). */
int term_screen_enter(struct term_screen *t, int in_fd, FILE *out);
/* Idempotent: the screen, the cursor and the input settings as they were. */
void term_screen_leave(struct term_screen *t);
/* The screen's size; 24x80 when the terminal does not say. */
void term_screen_size(const struct term_screen *t, int *rows, int *cols);

#endif /* DLPROF_TERM_SCREEN_H */
