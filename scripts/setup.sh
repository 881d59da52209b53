#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks, then starts dockerd if none runs.
# Idempotent and quick when everything is present. Runs as root.
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=.mk8s
mkdir -p "$STATE/logs" "$STATE/run"

need=()
command -v etcd >/dev/null       || need+=(etcd-server)
command -v etcdctl >/dev/null    || need+=(etcd-client)
command -v dockerd >/dev/null    || need+=(docker.io)
command -v docker-compose >/dev/null || need+=(docker-compose)
command -v iptables >/dev/null   || need+=(iptables)
command -v ip >/dev/null         || need+=(iproute2)
[ -x /bin/busybox ]              || need+=(busybox-static)
[ -x /usr/lib/cni/bridge ]       || need+=(containernetworking-plugins)
command -v conntrack >/dev/null  || need+=(conntrack)
# The official Python client, for the e2e tests that drive the cluster with it (Debian's python3).
[ -d /usr/lib/python3/dist-packages/kubernetes ] || need+=(python3-kubernetes)
# Debian's Prometheus, for the e2e scrape test of every component (test/e2e/prometheus.e2e.test.ts).
command -v prometheus >/dev/null || need+=(prometheus)
# Debian's HAProxy: the TCP balancer in front of the apiservers (mkctl cluster up --apiservers N, N > 1).
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || need+=(haproxy)
# Debian's Chromium, driven headless by playwright-core in the dashboard's browser e2e tests (no browser download).
[ -x /usr/bin/chromium ]         || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >"$STATE/logs/apt.log" 2>&1
  apt-get install -y -qq --no-install-recommends "${need[@]}" >>"$STATE/logs/apt.log" 2>&1 \
    || { echo "setup: apt-get install failed, see $STATE/logs/apt.log" >&2; tail -20 "$STATE/logs/apt.log" >&2; exit 1; }
fi

# npm ci only when the lock file changed since the last install.
stamp=node_modules/.mk8s-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund >"$STATE/logs/npm.log" 2>&1 || { tail -30 "$STATE/logs/npm.log" >&2; exit 1; }
  cp package-lock.json "$stamp"
fi

# dockerd: apt installs it without starting it (no init system here). Start one in the background
# and remember that we did, so `make down` stops only ours.
if ! docker info >/dev/null 2>&1; then
  echo "setup: starting dockerd (log: $STATE/logs/dockerd.log)"
  nohup dockerd >"$STATE/logs/dockerd.log" 2>&1 &
  echo $! >"$STATE/run/dockerd.pid"
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { echo "setup: dockerd did not start, see $STATE/logs/dockerd.log" >&2; tail -20 "$STATE/logs/dockerd.log" >&2; exit 1; }
fi
