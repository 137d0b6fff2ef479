#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Builds the agent image without a registry or network:
#   packaging/container/build-offline.sh [DEB] [TAG]
# DEB defaults to the package that packaging/deb/build makes (built first if
# missing), TAG to localhost/dlprof-bpf:VERSION. The root file system is the
# package unpacked plus the host's copies of the shared libraries the binary
# loads (Debian 12, the same as the Containerfile's bookworm base); podman
# import turns it into an image with the Containerfile's ENTRYPOINT, CMD,
# EXPOSE, USER and LABELs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
version=$(dpkg-parsechangelog -l "$top/packaging/deb/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
deb=${1:-$top/build-deb/dlprof-bpf_${version}_${arch}.deb}
tag=${2:-localhost/dlprof-bpf:$version}

command -v podman >/dev/null || {
	echo "build-offline.sh: podman is missing; install it with scripts/deps" >&2
	exit 1
}
if [ ! -f "$deb" ]; then
	[ $# -ge 1 ] && { echo "build-offline.sh: no package at $deb" >&2; exit 1; }
	"$top/packaging/deb/build" "$(dirname "$deb")" >&2
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/dlprof-image.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
root=$scratch/root
mkdir -p "$root/tmp" "$root/etc"
chmod 1777 "$root/tmp"
dpkg-deb -x "$deb" "$root"

# The loader and every library the binary needs, at the paths ldd names.
ldd "$root/usr/sbin/dlprof-bpf" |
	awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }' |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
# Debian's merged /usr: /lib64 and /lib are links in bookworm too.
for d in lib lib64; do
	if [ -d "$root/$d" ] && [ ! -L "$root/$d" ]; then
		mkdir -p "$root/usr/$d"
		cp -a "$root/$d/." "$root/usr/$d/"
		rm -rf "${root:?}/$d"
	fi
	[ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
done
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\n' > "$root/etc/group"

# The Containerfile's image settings, as podman import --change arguments.
set --
while IFS= read -r line; do
	case $line in
	ENTRYPOINT\ * | CMD\ * | EXPOSE\ * | USER\ * | LABEL\ *) set -- "$@" --change "$line" ;;
	esac
done < "$here/Containerfile"

tar -C "$root" -cf "$scratch/root.tar" .
podman import -q "$@" "$scratch/root.tar" "$tag" >/dev/null
echo "$tag"
