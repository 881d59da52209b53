#!/usr/bin/env node
/**
 * mk8s apiserver binary: `apiserver --etcd-servers=http://127.0.0.1:2379,... [--bind-address=A]...
 * [--port=6443] [--log-level=info] [--advertise-address=IP] [--service-cluster-ip-range=CIDR]
 * [--service-node-port-range=A-B] [--max-requests-inflight=N] [--max-mutating-requests-inflight=N] [--etcd-compaction-interval=5m (0 disables)]
 * [--etcd-cafile=F --etcd-certfile=F --etcd-keyfile=F] [--kubelet-client-certificate=F --kubelet-client-key=F --kubelet-certificate-authority=F] [--proxy-client-cert-file=F --proxy-client-key-file=F]
 * [--requestheader-client-ca-file=F --requestheader-allowed-names=N,... --requestheader-username-headers=H,... --requestheader-group-headers=H,... --requestheader-extra-headers-prefix=P,...]`
 * [--feature-gates=MaxUnavailableStatefulSet=true,...] and the security flags of auth/flags.ts.
 */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { createLogger, defaultFeatureGate, runComponents, setFeatureGatesFlag, setupSignalHandler } from '@mk8s/component-base';
import { createApiServer, parseDurationMs } from './apiserver.js';
import { securityFromFlags } from './auth/flags.js';
import type { KubeletClientConfig } from './endpoints/kubelet-proxy.js';

const splitList = (vs: readonly string[]): string[] => vs.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== '');

async function main(): Promise<void> {
  // parseArgs directly: --bind-address may be repeated, which parseFlags does not model.
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      'etcd-servers': { type: 'string' },
      'bind-address': { type: 'string', multiple: true },
      'port': { type: 'string' },
      'secure-port': { type: 'string' },
      'log-level': { type: 'string' },
      'service-cluster-ip-range': { type: 'string' },
      'advertise-address': { type: 'string' },
      'max-requests-inflight': { type: 'string' },
      'max-mutating-requests-inflight': { type: 'string' },
      'service-node-port-range': { type: 'string' },
      'tls-cert-file': { type: 'string' },
      'tls-private-key-file': { type: 'string' },
      'client-ca-file': { type: 'string' },
      'token-auth-file': { type: 'string' },
      'service-account-key-file': { type: 'string', multiple: true },
      'service-account-issuer': { type: 'string' },
      'service-account-signing-key-file': { type: 'string' },
      'enable-admission-plugins': { type: 'string', multiple: true },
      'admission-control-config-file': { type: 'string' },
      'authorization-mode': { type: 'string' },
      'anonymous-auth': { type: 'string' },
      'encryption-provider-config': { type: 'string' },
      'etcd-compaction-interval': { type: 'string' },
      'etcd-cafile': { type: 'string' },
      'etcd-certfile': { type: 'string' },
      'etcd-keyfile': { type: 'string' },
      'kubelet-client-certificate': { type: 'string' },
      'kubelet-client-key': { type: 'string' },
      'kubelet-certificate-authority': { type: 'string' },
      'proxy-client-cert-file': { type: 'string' },
      'proxy-client-key-file': { type: 'string' },
      'requestheader-client-ca-file': { type: 'string' },
      'requestheader-allowed-names': { type: 'string', multiple: true },
      'requestheader-username-headers': { type: 'string', multiple: true },
      'requestheader-group-headers': { type: 'string', multiple: true },
      'requestheader-extra-headers-prefix': { type: 'string', multiple: true },
      'audit-policy-file': { type: 'string' },
      'audit-log-path': { type: 'string' },
      'audit-log-maxsize': { type: 'string' },
      'audit-log-maxbackup': { type: 'string' },
      'audit-log-maxage': { type: 'string' },
      'feature-gates': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const env = (k: string) => process.env[`MK8S_${k.replace(/-/g, '_').toUpperCase()}`];
  const featureGateErr = setFeatureGatesFlag(defaultFeatureGate, values['feature-gates'] ?? env('feature-gates') ?? '');
  if (featureGateErr) { process.stderr.write(`Error: ${featureGateErr}\n`); process.exit(1); }
  const etcd = splitList([values['etcd-servers'] ?? env('etcd-servers') ?? 'http://127.0.0.1:2379']);
  const bind = splitList(values['bind-address'] ?? (env('bind-address') ? [env('bind-address')!] : ['127.0.0.1']));
  const port = Number(values['port'] ?? values['secure-port'] ?? env('port') ?? 6443);
  const logger = createLogger({ component: 'apiserver', level: values['log-level'] ?? env('log-level') ?? 'info' });
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${String(port)}`);
  const cidr = values['service-cluster-ip-range'] ?? env('service-cluster-ip-range');
  const portRange = values['service-node-port-range'] ?? env('service-node-port-range');
  let nodePorts: { base: number; size: number } | undefined;
  if (portRange) {
    const m = /^(\d+)-(\d+)$/.exec(portRange);
    if (!m) throw new Error(`invalid --service-node-port-range ${portRange}`);
    nodePorts = { base: Number(m[1]), size: Number(m[2]) - Number(m[1]) + 1 };
  }
  const readonlyLimit = Number(values['max-requests-inflight'] ?? env('max-requests-inflight') ?? 400);
  const mutatingLimit = Number(values['max-mutating-requests-inflight'] ?? env('max-mutating-requests-inflight') ?? 200);
  if (!Number.isInteger(readonlyLimit) || !Number.isInteger(mutatingLimit)) throw new Error('invalid --max-requests-inflight / --max-mutating-requests-inflight');
  const compaction = parseDurationMs(values['etcd-compaction-interval'] ?? env('etcd-compaction-interval') ?? '5m');
  const secure = securityFromFlags((k) => { const v = (values as Record<string, string | string[] | boolean | undefined>)[k]; return typeof v === 'string' || Array.isArray(v) ? v : undefined; }, env);
  const etcdTls = etcdTlsFromFlags(values['etcd-cafile'] ?? env('etcd-cafile'), values['etcd-certfile'] ?? env('etcd-certfile'), values['etcd-keyfile'] ?? env('etcd-keyfile'));
  const kubeletClient = kubeletClientFromFlags(values['kubelet-client-certificate'] ?? env('kubelet-client-certificate'),
    values['kubelet-client-key'] ?? env('kubelet-client-key'), values['kubelet-certificate-authority'] ?? env('kubelet-certificate-authority'));
  const flag = (k: string) => (values as Record<string, unknown>)[k] as string | undefined ?? env(k);
  // The aggregator's client identity towards APIService backends (upstream --proxy-client-cert-file/--proxy-client-key-file).
  const proxyCert = flag('proxy-client-cert-file'); const proxyKey = flag('proxy-client-key-file');
  if ((proxyCert === undefined) !== (proxyKey === undefined)) throw new Error('--proxy-client-cert-file and --proxy-client-key-file go together');
  const proxyClient = proxyCert && proxyKey ? { cert: readFileSync(proxyCert, 'utf8'), key: readFileSync(proxyKey, 'utf8') } : undefined;
  // Requestheader authentication (upstream --requestheader-*): published in extension-apiserver-authentication.
  const list = (k: string): string[] => { const v = (values as Record<string, unknown>)[k] as string[] | undefined; return splitList(v ?? (env(k) ? [env(k)!] : [])); };
  const rhCA = flag('requestheader-client-ca-file');
  const requestHeader = rhCA ? {
    clientCA: readFileSync(rhCA, 'utf8'), allowedNames: list('requestheader-allowed-names'),
    usernameHeaders: list('requestheader-username-headers'), groupHeaders: list('requestheader-group-headers'),
    extraHeadersPrefixes: list('requestheader-extra-headers-prefix'),
  } : undefined;
  const auditPolicy = flag('audit-policy-file'); const auditPath = flag('audit-log-path');
  const num = (k: string) => { const v = flag(k); if (v === undefined) return undefined; const n = Number(v); if (!Number.isInteger(n) || n < 0) throw new Error(`invalid --${k} ${v}`); return n; };
  // As upstream: without a policy file nothing is audited; without a log path there is no log backend.
  const auditLog = auditPolicy && auditPath ? {
    policyFile: auditPolicy, path: auditPath,
    ...(num('audit-log-maxsize') !== undefined ? { maxSizeMB: num('audit-log-maxsize')! } : {}),
    ...(num('audit-log-maxbackup') !== undefined ? { maxBackups: num('audit-log-maxbackup')! } : {}),
    ...(num('audit-log-maxage') !== undefined ? { maxAgeDays: num('audit-log-maxage')! } : {}),
  } : undefined;
  const signal = setupSignalHandler();
  await runComponents(signal, [createApiServer({
    etcdServers: etcd, bindAddresses: bind, port, logger,
    maxRequestsInflight: { readonly: readonlyLimit, mutating: mutatingLimit },
    etcdCompactionIntervalMs: compaction,
    ...(cidr ? { serviceClusterIPRange: cidr } : {}),
    ...((values['advertise-address'] ?? env('advertise-address')) ? { advertiseAddress: (values['advertise-address'] ?? env('advertise-address'))! } : {}),
    ...(nodePorts ? { serviceNodePortRange: nodePorts } : {}),
    ...secure,
    ...((values['enable-admission-plugins'] ?? (env('enable-admission-plugins') ? [env('enable-admission-plugins')!] : undefined)) ? { enableAdmissionPlugins: values['enable-admission-plugins'] ?? [env('enable-admission-plugins')!] } : {}),
    ...((values['admission-control-config-file'] ?? env('admission-control-config-file')) ? { admissionControlConfigFile: (values['admission-control-config-file'] ?? env('admission-control-config-file'))! } : {}),
    ...(etcdTls ? { etcdTls } : {}),
    ...(auditLog ? { auditLog } : {}),
    ...(kubeletClient ? { kubeletClient } : {}),
    ...(proxyClient ? { proxyClient } : {}),
    ...(requestHeader ? { requestHeader } : {}),
    ...((values['encryption-provider-config'] ?? env('encryption-provider-config')) ? { encryptionProviderConfig: (values['encryption-provider-config'] ?? env('encryption-provider-config'))! } : {}),
  })]);
}

function etcdTlsFromFlags(ca?: string, cert?: string, key?: string): { caFile: string; certFile?: string; keyFile?: string } | undefined {
  if ((cert === undefined) !== (key === undefined)) throw new Error('--etcd-certfile and --etcd-keyfile go together');
  if (!ca) {
    if (cert) throw new Error('--etcd-certfile needs --etcd-cafile');
    return undefined;
  }
  return { caFile: ca, ...(cert && key ? { certFile: cert, keyFile: key } : {}) };
}

function kubeletClientFromFlags(cert?: string, key?: string, ca?: string): KubeletClientConfig | undefined {
  if ((cert === undefined) !== (key === undefined)) throw new Error('--kubelet-client-certificate and --kubelet-client-key go together');
  if (!cert && !ca) return undefined;
  return { ...(cert && key ? { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') } : {}), ...(ca ? { ca: readFileSync(ca, 'utf8') } : {}) };
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
