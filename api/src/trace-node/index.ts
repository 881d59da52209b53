/**
 * @mk8s/api/trace-node: the node-local evidence of a chain (kube-proxy's iptables rules and DNS
 * answers inside each node's netns), read on the machine that runs the nodes. Node-only
 * (node:child_process): `mkctl trace`/`doctor` and the dashboard *server* import it; the
 * dashboard's browser bundle takes `@mk8s/api/trace` only.
 */
export { localNodes, nodeNetns, readNodeProxyEvidence, readProxyEvidence, type NodeReadOptions } from './proxy-rules.js';
export { probeDns } from './dns-probe.js';
export { execFileStdout, type ExecFile } from './node-exec.js';
