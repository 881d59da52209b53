#!/usr/bin/env bash
# Builds the images of the docker-compose cluster (docker-compose.yml at the repository root), offline:
#   mk8s/compose-base:dev  a root filesystem made here and `docker import`ed: busybox, the host's node and
#                          etcd/etcdctl, ip (iproute2), nsenter, iptables (nft and legacy), conntrack, each
#                          with the shared libraries `ldd` names, plus the xtables extensions.
#   mk8s/compose:dev       images/compose/Dockerfile FROM the base: the entrypoint scripts. The component code
#                          is NOT copied: compose mounts the repository read-only at /mk8s (a dev cluster: a
#                          rebuild of the repo is picked up by `docker compose restart`, no image rebuild).
# Idempotent like images/build.sh: rebuilt only when an input changed (hash in MK8S_IMAGE_HASH).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUSYBOX="${BUSYBOX:-/bin/busybox}"
NODE_BIN="$(readlink -f "${NODE_BIN:-$(command -v node)}")"

current_hash() {
  docker image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$1" 2>/dev/null \
    | sed -n 's/^MK8S_IMAGE_HASH=//p' | tail -n 1 || true
}

# Host tools the node and control-plane containers run. Missing optional ones are skipped with a note.
TOOLS=(/usr/bin/ip /usr/bin/nsenter /usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /usr/sbin/conntrack /usr/bin/etcd /usr/bin/etcdctl)
inputs=("$NODE_BIN" "$BUSYBOX" "$here/build.sh")
for t in "${TOOLS[@]}"; do [ -e "$t" ] && inputs+=("$t"); done
base_hash="$(cat "${inputs[@]}" | sha256sum | cut -c1-16)"

build_base() {
  local work d
  work="$(mktemp -d /tmp/mk8s-compose-image.XXXXXX)"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" RETURN
  d="$work/rootfs"
  mkdir -p "$d"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,proc,sys,dev,root,run,var/run,var/lib,home,mk8s}
  chmod 1777 "$d/tmp"
  cp "$BUSYBOX" "$d/bin/busybox"
  for applet in $("$BUSYBOX" --list); do [ -e "$d/bin/$applet" ] || ln -s busybox "$d/bin/$applet"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$d/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$d/etc/group"
  printf 'hosts: files dns\n' >"$d/etc/nsswitch.conf"
  local files=("$NODE_BIN")
  cp "$NODE_BIN" "$d/usr/bin/node"
  for t in "${TOOLS[@]}"; do
    if [ -e "$t" ]; then cp "$t" "$d$t"; files+=("$t"); else echo "images: compose-base: $t missing on this host, skipped" >&2; fi
  done
  # iptables front ends: the nft backend by default (what Debian's iptables is), legacy alongside.
  for n in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    [ -e "$d/usr/sbin/xtables-nft-multi" ] && ln -sf xtables-nft-multi "$d/usr/sbin/$n"
    [ -e "$d/usr/sbin/xtables-nft-multi" ] && ln -sf xtables-nft-multi "$d/usr/sbin/${n/tables/tables-nft}"
    [ -e "$d/usr/sbin/xtables-legacy-multi" ] && ln -sf xtables-legacy-multi "$d/usr/sbin/${n/tables/tables-legacy}"
  done
  # Busybox's own ip/nsenter/iptables applets must not shadow the real ones: /usr/sbin and /usr/bin first in PATH,
  # and the applet links removed where a real tool exists.
  for n in ip nsenter; do rm -f "$d/bin/$n" "$d/sbin/$n"; done
  # iptables dlopens its match/target extensions from XTABLES_LIBDIR (compiled in as /usr/lib/<triplet>/xtables;
  # on a usr-merged host ldd reports /lib/..., which is a real directory in this rootfs, so resolve it).
  local xt
  xt="$(readlink -f "$(dirname "$(ldd /usr/sbin/xtables-nft-multi 2>/dev/null | grep -o '/[^ ]*libxtables[^ ]*' | head -n1)")/xtables")"
  if [ -d "$xt" ]; then mkdir -p "$d$xt"; cp -a "$xt/." "$d$xt/"; files+=("$xt"/*.so); fi
  [ -d /etc/iproute2 ] && cp -a /etc/iproute2 "$d/etc/"
  # The dynamic loader and every library these link against, at the same paths.
  for lib in $(for f in "${files[@]}"; do ldd "$f" 2>/dev/null || true; done | grep -o '/[^ ]*' | sort -u); do
    [ -e "$d$lib" ] && continue
    mkdir -p "$d$(dirname "$lib")"
    cp -L "$lib" "$d$lib"
  done
  tar --numeric-owner --owner=0 --group=0 -C "$d" -c . | docker import \
    --change "ENV MK8S_IMAGE_HASH=$base_hash" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV XTABLES_LIBDIR=$xt" --change 'WORKDIR /mk8s' --change 'CMD ["sh"]' - mk8s/compose-base:dev >/dev/null
}

if [ "$(current_hash mk8s/compose-base:dev)" = "$base_hash" ]; then
  echo "images: mk8s/compose-base:dev up to date"
else
  build_base
  echo "images: mk8s/compose-base:dev built ($(docker image inspect --format '{{.Id}}' mk8s/compose-base:dev | cut -c1-19))"
fi

# The Dockerfile layer: DOCKER_BUILDKIT=0 because BuildKit (buildx) may be absent and would try to resolve
# FROM against a registry; the classic builder uses the local base image as is.
compose_hash="$(cat "$here/Dockerfile" "$here"/*.sh | sha256sum | cut -c1-16)-$base_hash"
if [ "$(current_hash mk8s/compose:dev)" = "$compose_hash" ]; then
  echo "images: mk8s/compose:dev up to date"
else
  log="$(mktemp)"
  DOCKER_BUILDKIT=0 docker build -q --build-arg "MK8S_COMPOSE_HASH=$compose_hash" -t mk8s/compose:dev "$here" >"$log" 2>&1 \
    || { cat "$log" >&2; rm -f "$log"; exit 1; }
  rm -f "$log"
  echo "images: mk8s/compose:dev built ($(docker image inspect --format '{{.Id}}' mk8s/compose:dev | cut -c1-19))"
fi
