#!/usr/bin/env bash
# Builds the images the cluster needs, offline (no registry is reachable): each is a root
# filesystem assembled here and turned into an image with `docker import`.
#   mk8s/pause:3.9        a static C pause (pause/pause.c; gcc -static), or busybox `sleep` without gcc
#   mk8s/busybox:1.36     Debian's busybox-static with all applet links; also tagged busybox:latest, busybox:1.36
#   mk8s/testserver:1.0   the host's node binary + its shared libraries + busybox + testserver/server.js
#   mk8s/cluster-dns:dev  the same node + cluster-dns bundled into one file by esbuild (from cluster-dns/dist)
# Idempotent and fast: an image is rebuilt only when missing or when its inputs changed (their
# hash is kept in the image's MK8S_IMAGE_HASH env). Prints one line per image.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUSYBOX="${BUSYBOX:-/bin/busybox}"
NODE_BIN="$(readlink -f "${NODE_BIN:-$(command -v node)}")"

command -v docker >/dev/null || { echo "images: docker is not installed" >&2; exit 1; }
[ -x "$BUSYBOX" ] || { echo "images: $BUSYBOX missing (apt-get install busybox-static)" >&2; exit 1; }
"$BUSYBOX" --list >/dev/null 2>&1 || { echo "images: $BUSYBOX is not a busybox multi-call binary" >&2; exit 1; }

work="$(mktemp -d /tmp/mk8s-images.XXXXXX)"
trap 'rm -rf "$work"' EXIT

hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# current_hash IMAGE: the MK8S_IMAGE_HASH of IMAGE, empty when the image is missing.
current_hash() {
  docker image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$1" 2>/dev/null \
    | sed -n 's/^MK8S_IMAGE_HASH=//p' || true
}

# import ROOTFS IMAGE HASH CHANGES...: tars ROOTFS into IMAGE with Dockerfile-style changes.
import_rootfs() {
  local rootfs="$1" image="$2" hash="$3"; shift 3
  local args=(--change "ENV MK8S_IMAGE_HASH=$hash")
  for c in "$@"; do args+=(--change "$c"); done
  tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -c . | docker import "${args[@]}" - "$image" >/dev/null
}

# busybox_rootfs DIR: busybox with every applet linked under /bin, plus the files a shell expects.
busybox_rootfs() {
  local d="$1"
  mkdir -p "$d"/{bin,etc,tmp,proc,sys,dev,root,var/run,home}
  chmod 1777 "$d/tmp"
  cp "$BUSYBOX" "$d/bin/busybox"
  for applet in $("$BUSYBOX" --list); do [ -e "$d/bin/$applet" ] || ln -s busybox "$d/bin/$applet"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$d/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$d/etc/group"
}

# ensure IMAGE HASH BUILDER: builds IMAGE with BUILDER when missing or stale.
ensure() {
  local image="$1" hash="$2" builder="$3"
  if [ "$(current_hash "$image")" = "$hash" ]; then
    echo "images: $image up to date"
    return
  fi
  "$builder" "$image" "$hash"
  echo "images: $image built ($(docker image inspect --format '{{.Id}}' "$image" | cut -c1-19))"
}

# --- pause ---------------------------------------------------------------------------------
# Preferred: the C pause, static (forwards nothing, exits 0 on SIGTERM, reaps zombies). Without
# gcc + static libc, busybox `sleep` as PID 1: signals without a handler are ignored by PID 1, so
# Docker's stop then kills it after the timeout (acceptable, just slower).
if command -v gcc >/dev/null && echo 'int main(void){return 0;}' | gcc -static -x c -o "$work/static-probe" - 2>/dev/null; then
  PAUSE_KIND=c
  pause_hash="$(hash_of "$here/pause/pause.c" "$here/build.sh")"
else
  PAUSE_KIND=busybox
  pause_hash="$(hash_of "$BUSYBOX" "$here/build.sh")"
fi
build_pause() {
  local d="$work/pause"; mkdir -p "$d"
  if [ "$PAUSE_KIND" = c ]; then
    gcc -static -Os -o "$d/pause" "$here/pause/pause.c"
    strip "$d/pause" 2>/dev/null || true
    import_rootfs "$d" "$1" "$2" 'ENTRYPOINT ["/pause"]'
  else
    cp "$BUSYBOX" "$d/pause"
    import_rootfs "$d" "$1" "$2" 'ENTRYPOINT ["/pause", "sleep", "2147483647"]'
  fi
}
ensure mk8s/pause:3.9 "$pause_hash" build_pause

# --- busybox -------------------------------------------------------------------------------
build_busybox() {
  busybox_rootfs "$work/busybox"
  import_rootfs "$work/busybox" "$1" "$2" 'CMD ["sh"]' 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
}
ensure mk8s/busybox:1.36 "$(hash_of "$BUSYBOX" "$here/build.sh")" build_busybox
for tag in busybox:latest busybox:1.36; do
  [ "$(docker image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)" = "$(docker image inspect --format '{{.Id}}' mk8s/busybox:1.36)" ] \
    || docker tag mk8s/busybox:1.36 "$tag"
done

# --- testserver ----------------------------------------------------------------------------
# A busybox root filesystem with the host's node binary, its dynamic loader and every library it
# links against, at the same paths: the base of every image that runs JavaScript.
node_rootfs() {
  local d="$1"
  busybox_rootfs "$d"
  mkdir -p "$d/app" "$d/usr/bin"
  cp "$NODE_BIN" "$d/usr/bin/node"
  for lib in $(ldd "$NODE_BIN" | grep -o '/[^ ]*' | sort -u); do
    mkdir -p "$d$(dirname "$lib")"
    cp -L "$lib" "$d$lib"
  done
}
build_testserver() {
  local d="$work/testserver"
  node_rootfs "$d"
  cp "$here/testserver/server.js" "$d/app/server.js"
  import_rootfs "$d" "$1" "$2" 'ENTRYPOINT ["/usr/bin/node", "/app/server.js"]' 'ENV PORT=8080' 'EXPOSE 8080' \
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
}
ensure mk8s/testserver:1.0 "$(hash_of "$NODE_BIN" "$BUSYBOX" "$here/testserver/server.js" "$here/build.sh")" build_testserver

# --- cluster-dns ---------------------------------------------------------------------------
# The add-on's code is bundled (esbuild, already a dependency) into one ESM file, so the image
# carries no node_modules; CommonJS dependencies get a require() through createRequire.
repo="$(cd "$here/.." && pwd)"
if [ -f "$repo/cluster-dns/dist/main.js" ]; then
  "$repo/node_modules/.bin/esbuild" "$repo/cluster-dns/dist/main.js" --bundle --platform=node --format=esm --target=node20 \
    --outfile="$work/cluster-dns.mjs" --log-level=warning \
    --banner:js="import { createRequire as __mk8sRequire } from 'node:module'; const require = __mk8sRequire(import.meta.url);"
  build_cluster_dns() {
    local d="$work/cluster-dns"
    node_rootfs "$d"
    cp "$work/cluster-dns.mjs" "$d/app/cluster-dns.mjs"
    import_rootfs "$d" "$1" "$2" 'ENTRYPOINT ["/usr/bin/node", "/app/cluster-dns.mjs"]' 'EXPOSE 53/udp' 'EXPOSE 53/tcp' 'EXPOSE 9153' \
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  }
  ensure mk8s/cluster-dns:dev "$(hash_of "$NODE_BIN" "$BUSYBOX" "$work/cluster-dns.mjs" "$here/build.sh")" build_cluster_dns
else
  echo "images: mk8s/cluster-dns:dev skipped (cluster-dns/dist/main.js missing: run npx tsc -b first)" >&2
fi
bash "$here/compose/build.sh"   # mk8s/compose-base:dev + mk8s/compose:dev (docker-compose.yml)
