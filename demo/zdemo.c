// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bundled demo workload: compresses and decompresses generated text
 * with the system's libz, in chunks, checking every round trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHUNK (64 * 1024)

static void fill_text(unsigned char *buf, size_t n, unsigned int seed)
{
	static const char *const words[] = { "profile ", "uprobe ", "kernel ", "latency ",
					     "library ", "function ", "counter ", "trace\n" };

	for (size_t i = 0; i < n;) {
		const char *w = words[(seed = seed * 1103515245u + 12345u) >> 29];
		size_t len = strlen(w);

		if (len > n - i)
			len = n - i;
		memcpy(buf + i, w, len);
		i += len;
	}
}

int main(int argc, char **argv)
{
	int chunks = argc > 1 ? atoi(argv[1]) : 200;
	unsigned char *in = malloc(CHUNK), *out = malloc(compressBound(CHUNK)), *back = malloc(CHUNK);
	unsigned long total_in = 0, total_out = 0;

	if (!in || !out || !back || chunks <= 0)
		return 2;
	for (int c = 0; c < chunks; c++) {
		uLongf out_len = compressBound(CHUNK), back_len = CHUNK;

		fill_text(in, CHUNK, (unsigned int)c);
		if (compress2(out, &out_len, in, CHUNK, c % 9 + 1) != Z_OK ||
		    uncompress(back, &back_len, out, out_len) != Z_OK ||
		    back_len != CHUNK || crc32(0, in, CHUNK) != crc32(0, back, CHUNK)) {
			fprintf(stderr, "zdemo: round trip of chunk %d failed\n", c);
			return 1;
		}
		total_in += CHUNK;
		total_out += out_len;
	}
	printf("zdemo: %d chunks, %lu bytes -> %lu compressed\n", chunks, total_in, total_out);
	free(in);
	free(out);
	free(back);
	return 0;
}
