#!/bin/sh
# Entrypoint of the compose cluster's containers: `mk8s-entrypoint ROLE ARGS...`.
#   etcd ARGS            etcd
#   apiserver ARGS       drops this container's default route first (it sits on the edge network
#                        only to publish its port on the host's 127.0.0.1; it must not reach beyond
#                        the machine), prints the host's kubeconfig, then runs the apiserver
#   controller-manager|scheduler ARGS   the component with --kubeconfig /etc/mk8s/kubeconfig
#   node ARGS            mkctl node join --foreground ARGS (cri-docker + kubelet + kube-proxy)
#   addons ARGS          mkctl cluster addons --apiserver <the apiserver> ARGS: the cluster DNS add-on, once
set -eu
role="${1:?usage: mk8s-entrypoint etcd|apiserver|controller-manager|scheduler|node|addons ARGS...}"; shift
[ -f /mk8s/mkctl/dist/main.js ] || { echo "mk8s: /mk8s has no built code: run 'make build' on the host, then compose up" >&2; exit 1; }
case "$role" in
  etcd) exec etcd "$@" ;;
  apiserver)
    ip route del default 2>/dev/null || true
    port="${MK8S_COMPOSE_PORT:-16443}"
    cat <<KCFG
# kubeconfig for the host (also at images/compose/kubeconfig in the repository):
apiVersion: v1
kind: Config
clusters: [{name: mk8s-compose, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: admin, user: {}}]
contexts: [{name: mk8s-compose, context: {cluster: mk8s-compose, user: admin, namespace: default}}]
current-context: mk8s-compose
KCFG
    exec node /mk8s/apiserver/dist/main.js "$@" ;;
  controller-manager|scheduler) exec node "/mk8s/$role/dist/main.js" --kubeconfig /etc/mk8s/kubeconfig "$@" ;;
  node) exec node /mk8s/mkctl/dist/main.js node join --foreground "$@" ;;
  addons) exec node /mk8s/mkctl/dist/main.js cluster addons "$@" ;;
  *) echo "mk8s: unknown role $role" >&2; exit 2 ;;
esac
