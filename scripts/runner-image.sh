#!/usr/bin/env bash
# Builds the runner image the container suites use, with no registry: a
# tarball holding a static busybox and its applet links, fed to `docker import`.
# Idempotent: an existing tag is kept unless --force is given.
#
#   scripts/runner-image.sh [--force] [tag]     (default tag: roundtable-runner:latest)
#
# Needs DOCKER_HOST (or the default socket) and busybox-static.
set -euo pipefail

force=0
if [ "${1:-}" = "--force" ]; then force=1; shift; fi
tag="${1:-${ROUNDTABLE_RUNNER_IMAGE:-roundtable-runner:latest}}"

if [ "$force" = 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "runner-image: $tag already present"
  exit 0
fi

# Debian's busybox-static installs a statically linked /bin/busybox; a dynamic
# one would need the host's libc inside the image.
busybox_bin=""
for candidate in /bin/busybox /usr/bin/busybox "$(command -v busybox || true)"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then busybox_bin="$candidate"; break; fi
done
[ -n "$busybox_bin" ] || { echo "runner-image: busybox-static is not installed" >&2; exit 1; }

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/tmp" "$root/etc"
cp "$busybox_bin" "$root/bin/busybox"
# Every applet becomes a link, so the wrapper's sh, tee, cat, mv, sleep, tail
# and wc (and whatever a test command needs) resolve on PATH.
for applet in $("$busybox_bin" --list); do
  [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
done
chmod 1777 "$root/tmp"
echo 'root:x:0:0:root:/tmp:/bin/sh' > "$root/etc/passwd"

tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/bin' \
  --change 'WORKDIR /tmp' \
  --change 'CMD ["/bin/sh"]' \
  - "$tag" >/dev/null
echo "runner-image: built $tag ($(docker image inspect --format '{{.Id}}' "$tag"))"
