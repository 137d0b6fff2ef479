#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The include rules of docs/architecture.md, checked on the sources.
cd "$1/user" || exit 1
fail=0
bad() { echo "layering: $1"; fail=1; }

out=$(grep -rln --include='*.[ch]' '#include "probe/session.h"' . | grep -v '^\./cmd/\|^\./agent/\|^\./probe/session\.c$')
[ -z "$out" ] || bad "only cmd/ includes the session: $out"
out=$(grep -rl --include='*.[ch]' 'profile\(_ctx\)\?\.skel\.h' . | grep -v '^\./probe/session\.c$')
[ -z "$out" ] || bad "profile{,_ctx}.skel.h outside probe/session.c: $out"
out=$(grep -ln '#include "probe/\|#include "cmd/\|#include <bpf/\|skel\.h' output/*)
[ -z "$out" ] || bad "output/ includes probe/, cmd/ or BPF: $out"
out=$(grep -ln '#include "probe/\|#include "cmd/' elf/* trace/* model/* util/*)
[ -z "$out" ] || bad "elf/, trace/, model/, util/ include probe/ or cmd/: $out"
out=$(grep -h '#include "' util/* | grep -v '"util/')
[ -z "$out" ] || bad "util/ includes outside util/: $out"
out=$(grep -ln '#include "cmd/' agent/*)
[ -z "$out" ] || bad "agent/ includes cmd/: $out"
out=$(grep -rln --include='*.[ch]' '#include "agent/' . | grep -v '^\./cmd/\|^\./agent/')
[ -z "$out" ] || bad "only cmd/ includes agent/: $out"
# A name without a part is include/'s (or a generated skeleton), never a sibling's.
out=$(grep -rn --include='*.[ch]' '#include "[^/"]*"' . | while IFS='"' read -r where name _; do
	[ -f "../include/$name" ] || [ "${name%.skel.h}" != "$name" ] || echo "$where$name"
done)
[ -z "$out" ] || bad "includes name the part: $out"
# include/'s headers are shared with the BPF programs: dlprof.h (with what
# it includes) anywhere, every other one only in the part that reads it.
for h in $(cd ../include && ls *.h); do
	case $h in
	dlprof.h | shared_types.h | histogram.h) continue ;;
	trace_format.h) part=trace ;;
	*) part=probe ;;
	esac
	out=$(grep -rln --include='*.[ch]' "#include \"$h\"" . | grep -v "^\./$part/")
	[ -z "$out" ] || bad "$h, a layout shared with BPF, outside $part/: $out"
done
out=$(grep -rln --include='*.[ch]' '#include "cmd/commands.h"' . | grep -v '^\./cmd/main\.c$\|^\./cmd/commands\.c$')
[ -z "$out" ] || bad "only cmd/main.c includes the command table (a command returns CMD_HELP): $out"
exit $fail
