#!/bin/sh
# Entrypoint of the compose cluster's containers: `mk8s-entrypoint ROLE ARGS...`. Each service's
# credentials are in /etc/mk8s/tls (made by the pki service; mkctl/src/cluster/compose.ts).
#   pki ARGS             mkctl cluster compose-pki ARGS: the PKI and every service's credentials, once
#   etcd ARGS            etcd
#   apiserver ARGS       drops this container's default route first (it sits on the edge network
#                        only to publish its port on the host's 127.0.0.1; it must not reach beyond
#                        the machine), then runs the apiserver with the flags in /etc/mk8s/tls/flags
#   controller-manager|scheduler ARGS   the component
#   node ARGS            mkctl node join --foreground ARGS (cri-docker + kubelet + kube-proxy)
#   addons ARGS          mkctl cluster addons ARGS as the admin: the cluster DNS add-on, once
#   probe URL [CA]       exit 0 when an HTTPS GET of URL (trusting CA) answers 200: health checks
#                        (busybox wget cannot handshake with the cluster's ECDSA certificates)
set -eu
role="${1:?usage: mk8s-entrypoint pki|etcd|apiserver|controller-manager|scheduler|node|addons|probe ARGS...}"; shift
[ -f /mk8s/mkctl/dist/main.js ] || { echo "mk8s: /mk8s has no built code: run 'make build' on the host, then compose up" >&2; exit 1; }
case "$role" in
  pki) exec node /mk8s/mkctl/dist/main.js cluster compose-pki "$@" ;;
  etcd) exec etcd "$@" ;;
  apiserver)
    ip route del default 2>/dev/null || true
    echo "mk8s: the host's admin kubeconfig: node mkctl/dist/main.js cluster compose-credentials --port ${MK8S_COMPOSE_PORT:-16443} --out FILE"
    # One flag or value a line, none with spaces: word splitting on newlines only.
    IFS='
'
    # shellcheck disable=SC2046
    set -- $(cat /etc/mk8s/tls/flags) "$@"
    unset IFS
    exec node /mk8s/apiserver/dist/main.js "$@" ;;
  controller-manager|scheduler) exec node "/mk8s/$role/dist/main.js" "$@" ;;
  node) exec node /mk8s/mkctl/dist/main.js node join --foreground "$@" ;;
  addons) exec node /mk8s/mkctl/dist/main.js --kubeconfig /etc/mk8s/tls/kubeconfig cluster addons "$@" ;;
  probe) exec node -e '
    const [url, ca] = process.argv.slice(1);
    const r = require("node:https").get(url, { ...(ca ? { ca: require("node:fs").readFileSync(ca) } : {}), timeout: 4000 }, (res) => { res.resume(); process.exit(res.statusCode === 200 ? 0 : 1); });
    r.on("error", () => process.exit(1)); r.on("timeout", () => process.exit(1));' "$@" ;;
  *) echo "mk8s: unknown role $role" >&2; exit 2 ;;
esac
