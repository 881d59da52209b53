/**
 * The cluster PKI (kubeadm's `certs` phase): a cluster CA, the apiserver serving certificate, one
 * client certificate per component identity, kubelet serving certificates and the ServiceAccount
 * signing key pair, written as PEM files. ensurePki is idempotent: files already present are kept,
 * so a restart or a node added later never rotates what running components trust.
 */
// @peculiar/x509 resolves its ASN.1 schemas through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto, createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile, access, rename } from 'node:fs/promises';
import { join } from 'node:path';

type Crypto = webcrypto.Crypto;
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

/** Certificates use ECDSA P-256 (fast to make, accepted by Go, Node and etcd); the SA key is RSA for RS256. */
const EC_ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const RSA_ALG = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 } as const;
const DAY_MS = 86_400_000;

/** DNS names every apiserver serving certificate carries (the in-cluster `kubernetes` Service). */
export const APISERVER_DNS_NAMES: readonly string[] = [
  'localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local',
];
/** IPs the apiserver certificate carries by default: loopback, the host side of the node network, the `kubernetes` ClusterIP. */
export const APISERVER_DEFAULT_IPS: readonly string[] = ['127.0.0.1', '10.240.0.1', '10.96.0.1'];

export interface PkiOptions {
  /** Node names: each gets a kubelet client cert (system:node:<name>) and a serving cert. */
  nodes: readonly string[];
  /** Extra IPs for each kubelet's serving cert, by node name (its node-network address). */
  nodeIPs?: Readonly<Record<string, readonly string[]>>;
  /** Extra SAN IPs / DNS names for the apiserver serving cert. */
  apiserverIPs?: readonly string[];
  apiserverDNSNames?: readonly string[];
  /** Extra SAN IPs / DNS names for the etcd server and peer certs (127.0.0.1 and localhost always). */
  etcdIPs?: readonly string[];
  etcdDNSNames?: readonly string[];
  /** Certificate lifetime. @default 365 days (the CA: 10 years) */
  validityDays?: number;
  /** @default new Date() */
  now?: Date;
}

/** A certificate/key pair on disk. */
export interface CertPaths { cert: string; key: string }

/** Every file ensurePki makes, by role. */
export interface PkiPaths {
  dir: string;
  ca: CertPaths;
  apiserver: CertPaths;
  /** The apiserver's client identity towards kubelets (CN kube-apiserver-kubelet-client, O system:masters). */
  apiserverKubeletClient: CertPaths;
  admin: CertPaths;
  controllerManager: CertPaths;
  scheduler: CertPaths;
  kubeProxy: CertPaths;
  /** By node name. */
  kubelets: Record<string, { client: CertPaths; serving: CertPaths }>;
  /** ServiceAccount token signing key (PKCS#8 RSA) and its public key (SPKI). */
  serviceAccount: { key: string; pub: string };
  /**
   * etcd's own CA (kubeadm's etcd/ca): etcd trusts only certificates it signed, so no cluster
   * identity (a kubelet's, a user's) can open etcd. server/peer serve clients and peers; the
   * apiserver's client identity is apiserverEtcdClient (CN kube-apiserver-etcd-client).
   */
  etcd: { ca: CertPaths; server: CertPaths; peer: CertPaths };
  apiserverEtcdClient: CertPaths;
  /**
   * The front-proxy CA (kubeadm's front-proxy-ca) and the aggregator's client identity signed by it
   * (CN front-proxy-client): extension apiservers trust X-Remote-User only from this CA and CN.
   */
  frontProxy: { ca: CertPaths; client: CertPaths };
}

/** One certificate to issue. */
export interface CertSpec {
  commonName: string;
  organizations?: readonly string[];
  usage: 'client' | 'server' | 'both';
  dnsNames?: readonly string[];
  ips?: readonly string[];
}

const pair = (dir: string, base: string): CertPaths => ({ cert: join(dir, `${base}.crt`), key: join(dir, `${base}.key`) });

/** The paths ensurePki uses under dir (pure; nothing is read or written). */
export function pkiPaths(dir: string, nodes: readonly string[]): PkiPaths {
  const kubelets: PkiPaths['kubelets'] = {};
  for (const n of nodes) kubelets[n] = { client: pair(dir, `kubelet-${n}`), serving: pair(dir, `kubelet-${n}-serving`) };
  return {
    dir,
    ca: pair(dir, 'ca'),
    apiserver: pair(dir, 'apiserver'),
    apiserverKubeletClient: pair(dir, 'apiserver-kubelet-client'),
    admin: pair(dir, 'admin'),
    controllerManager: pair(dir, 'kube-controller-manager'),
    scheduler: pair(dir, 'kube-scheduler'),
    kubeProxy: pair(dir, 'kube-proxy'),
    kubelets,
    serviceAccount: { key: join(dir, 'sa.key'), pub: join(dir, 'sa.pub') },
    etcd: { ca: pair(join(dir, 'etcd'), 'ca'), server: pair(join(dir, 'etcd'), 'server'), peer: pair(join(dir, 'etcd'), 'peer') },
    apiserverEtcdClient: pair(dir, 'apiserver-etcd-client'),
    frontProxy: { ca: pair(dir, 'front-proxy-ca'), client: pair(dir, 'front-proxy-client') },
  };
}

/**
 * Makes every missing file of the cluster PKI under dir (created 0700; keys 0600). Idempotent and
 * additive: existing files are kept as they are (a new node only adds its own certificates).
 * Not safe to run concurrently on the same dir (callers hold the cluster lock).
 */
export async function ensurePki(dir: string, opts: PkiOptions): Promise<PkiPaths> {
  const p = pkiPaths(dir, opts.nodes);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const now = opts.now ?? new Date();
  const days = opts.validityDays ?? 365;
  const ca = await ensureCa(p.ca, now);
  const issueBy = async (by: CertificateAuthority, paths: CertPaths, spec: CertSpec) => {
    if (await exists(paths.cert) && await exists(paths.key)) return;
    const out = await issueCertificate(by, spec, { now, validityDays: days });
    await writeKeyPair(paths, out);
  };
  const issue = (paths: CertPaths, spec: CertSpec) => issueBy(ca, paths, spec);
  const apiserverSans = {
    dnsNames: uniq([...APISERVER_DNS_NAMES, ...(opts.apiserverDNSNames ?? [])]),
    ips: uniq([...APISERVER_DEFAULT_IPS, ...(opts.apiserverIPs ?? [])]),
  };
  // The one exception to "kept as they are": a serving certificate that lacks an address now asked
  // for (more apiservers, each on an address of its own) is issued again by the same CA, so clients
  // that trust the CA trust it unchanged (kubeadm's `certs apiserver` phase after new --apiserver-cert-extra-sans).
  if (await exists(p.apiserver.cert)) {
    const cur = new X509Certificate(await readFile(p.apiserver.cert, 'utf8'));
    if (apiserverSans.ips.some((ip) => !cur.checkIP(ip)) || apiserverSans.dnsNames.some((n) => !cur.checkHost(n, { wildcards: false }))) {
      const out = await issueCertificate(ca, { commonName: 'kube-apiserver', usage: 'server', ...apiserverSans }, { now, validityDays: days });
      await writeKeyPair(p.apiserver, out);
    }
  }
  await issue(p.apiserver, { commonName: 'kube-apiserver', usage: 'server', ...apiserverSans });
  await issue(p.apiserverKubeletClient, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usage: 'client' });
  await issue(p.admin, { commonName: 'kubernetes-admin', organizations: ['system:masters'], usage: 'client' });
  await issue(p.controllerManager, { commonName: 'system:kube-controller-manager', usage: 'client' });
  await issue(p.scheduler, { commonName: 'system:kube-scheduler', usage: 'client' });
  await issue(p.kubeProxy, { commonName: 'system:kube-proxy', usage: 'client' });
  for (const n of opts.nodes) {
    const k = p.kubelets[n]!;
    await issue(k.client, { commonName: `system:node:${n}`, organizations: ['system:nodes'], usage: 'client' });
    await issue(k.serving, {
      commonName: `system:node:${n}`, organizations: ['system:nodes'], usage: 'server',
      dnsNames: [n, 'localhost'], ips: uniq(['127.0.0.1', ...(opts.nodeIPs?.[n] ?? [])]),
    });
  }
  await mkdir(join(dir, 'etcd'), { recursive: true, mode: 0o700 });
  const etcdCa = await ensureCa(p.etcd.ca, now, 'mk8s-etcd-ca');
  const etcdSans = { dnsNames: uniq(['localhost', ...(opts.etcdDNSNames ?? [])]), ips: uniq(['127.0.0.1', ...(opts.etcdIPs ?? [])]) };
  await issueBy(etcdCa, p.etcd.server, { commonName: 'mk8s-etcd-server', usage: 'both', ...etcdSans });
  await issueBy(etcdCa, p.etcd.peer, { commonName: 'mk8s-etcd-peer', usage: 'both', ...etcdSans });
  await issueBy(etcdCa, p.apiserverEtcdClient, { commonName: 'kube-apiserver-etcd-client', usage: 'client' });
  const frontProxyCa = await ensureCa(p.frontProxy.ca, now, 'front-proxy-ca');
  await issueBy(frontProxyCa, p.frontProxy.client, { commonName: 'front-proxy-client', usage: 'client' });
  if (!(await exists(p.serviceAccount.key) && await exists(p.serviceAccount.pub))) {
    const keys = await webcrypto.subtle.generateKey(RSA_ALG, true, ['sign', 'verify']) as CryptoKeyPair;
    await writeFileAtomic(p.serviceAccount.key, pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)), 0o600);
    await writeFileAtomic(p.serviceAccount.pub, pem('PUBLIC KEY', await webcrypto.subtle.exportKey('spki', keys.publicKey)), 0o644);
  }
  return p;
}

/** A CA able to sign: its certificate and private key. */
export interface CertificateAuthority { cert: x509.X509Certificate; key: CryptoKey; certPem: string }

/** Loads the CA at paths, or makes a new self-signed one (10 years) when either file is missing. */
export async function ensureCa(paths: CertPaths, now = new Date(), commonName = 'mk8s-ca'): Promise<CertificateAuthority> {
  if (await exists(paths.cert) && await exists(paths.key)) return loadCa(paths);
  const keys = await webcrypto.subtle.generateKey(EC_ALG, true, ['sign', 'verify']) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(), name: `CN=${escapeRdn(commonName)}`, keys, signingAlgorithm: EC_ALG,
    notBefore: new Date(now.getTime() - 60_000), notAfter: new Date(now.getTime() + 3650 * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  }, webcrypto as unknown as Crypto);
  const certPem = cert.toString('pem');
  await writeKeyPair(paths, { certPem, keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) });
  return { cert, key: keys.privateKey, certPem };
}

/** Reads a CA written by ensureCa. */
export async function loadCa(paths: CertPaths): Promise<CertificateAuthority> {
  const certPem = await readFile(paths.cert, 'utf8');
  const keyPem = await readFile(paths.key, 'utf8');
  const der = createPrivateKey(keyPem).export({ format: 'der', type: 'pkcs8' });
  const key = await webcrypto.subtle.importKey('pkcs8', der, EC_ALG, true, ['sign']);
  return { cert: new x509.X509Certificate(certPem), key, certPem };
}

/** Issues one certificate signed by ca with a fresh P-256 key; returns both as PEM. */
export async function issueCertificate(ca: CertificateAuthority, spec: CertSpec, o: { now?: Date; validityDays?: number } = {}): Promise<{ certPem: string; keyPem: string }> {
  const now = o.now ?? new Date();
  const keys = await webcrypto.subtle.generateKey(EC_ALG, true, ['sign', 'verify']) as CryptoKeyPair;
  const eku: string[] = [];
  if (spec.usage !== 'server') eku.push(x509.ExtendedKeyUsage.clientAuth);
  if (spec.usage !== 'client') eku.push(x509.ExtendedKeyUsage.serverAuth);
  const sans: x509.JsonGeneralName[] = [
    ...(spec.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(spec.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const name = [`CN=${escapeRdn(spec.commonName)}`, ...(spec.organizations ?? []).map((org) => `O=${escapeRdn(org)}`)].join(', ');
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(), subject: name, issuer: ca.cert.subject,
    notBefore: new Date(now.getTime() - 60_000), notAfter: new Date(now.getTime() + (o.validityDays ?? 365) * DAY_MS),
    publicKey: keys.publicKey, signingKey: ca.key, signingAlgorithm: EC_ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(eku, false),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false),
      ...(sans.length ? [new x509.SubjectAlternativeNameExtension(sans, false)] : []),
    ],
  }, webcrypto as unknown as Crypto);
  return { certPem: cert.toString('pem'), keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) };
}

/** Subject fields of a PEM certificate as Kubernetes reads them: CN → user, O → groups. */
export function subjectOf(certPem: string): { commonName: string; organizations: string[] } {
  const c = new X509Certificate(certPem);
  const lines = c.subject.split('\n');
  return {
    commonName: lines.find((l) => l.startsWith('CN='))?.slice(3) ?? '',
    organizations: lines.filter((l) => l.startsWith('O=')).map((l) => l.slice(2)),
  };
}

function escapeRdn(v: string): string { return v.replace(/([,+"\\<>;=])/g, '\\$1'); }

function serial(): string {
  // Positive 64-bit serial: clear the top bit so DER never reads it as negative.
  const b = webcrypto.getRandomValues(new Uint8Array(8));
  b[0] = b[0]! & 0x7f | 0x01;
  return Buffer.from(b).toString('hex');
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

async function writeKeyPair(paths: CertPaths, o: { certPem: string; keyPem: string }): Promise<void> {
  // Key first: a crash between the writes leaves a key without a cert, which is re-issued.
  await writeFileAtomic(paths.key, o.keyPem, 0o600);
  await writeFileAtomic(paths.cert, o.certPem, 0o644);
}

async function writeFileAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
}

async function exists(path: string): Promise<boolean> {
  try { await access(path); return true; } catch { return false; }
}

const uniq = (xs: readonly string[]): string[] => [...new Set(xs)];
