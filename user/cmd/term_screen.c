// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "cmd/term_screen.h"

#define ALT_SCREEN_ON "\033[?1049h"
#define ALT_SCREEN_OFF "\033[?1049l"
#define CURSOR_HIDE "\033[?25l"
#define CURSOR_SHOW "\033[?25h"

int term_screen_enter(struct term_screen *t, int in_fd, FILE *out)
{
	struct termios raw;

	t->in_fd = in_fd;
	t->out = out;
	if (!isatty(in_fd) || !isatty(fileno(out)))
		return -ENOTTY;
	if (tcgetattr(in_fd, &t->saved))
		return -errno;
	raw = t->saved;
	/* Keys arrive as typed, unechoed; ISIG stays, so Ctrl-C still ends the profile through its signal. */
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(in_fd, TCSANOW, &raw))
		return -errno;
	t->active = true;
	fputs(ALT_SCREEN_ON CURSOR_HIDE, out);
	fflush(out);
	return 0;
}

void term_screen_leave(struct term_screen *t)
{
	if (!t->active)
		return;
	fputs(CURSOR_SHOW ALT_SCREEN_OFF, t->out);
	fflush(t->out);
	tcsetattr(t->in_fd, TCSANOW, &t->saved);
	t->active = false;
}

void term_screen_size(const struct term_screen *t, int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (!ioctl(fileno(t->out), TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}
