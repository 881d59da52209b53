/**
 * PKCS#10 certificate signing requests as the certificates.k8s.io API handles them: parsing and
 * checking a request the way upstream's `certificates.ParseCSR` + `CheckSignature` do (the apiserver
 * validates every CertificateSigningRequest with it), and signing one with the cluster CA (the
 * controller-manager's csrsigning controller, upstream pkg/controller/certificates/authority).
 */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPublicKey, verify as cryptoVerify, webcrypto } from 'node:crypto';
import type { CertificateAuthority } from './pki.js';

type Crypto = webcrypto.Crypto;

/** A parsed, signature-checked certificate request. */
export interface ParsedCertificateRequest {
  /** Subject CN (the user name the certificate will authenticate as). */
  commonName: string;
  /** Subject O values (the groups). */
  organizations: string[];
  dnsNames: string[];
  ips: string[];
  emails: string[];
  uris: string[];
  /** 'EC' | 'RSA' | … (the public key's algorithm name as WebCrypto says it). */
  keyAlgorithm: string;
  /** The underlying request (for signing). */
  request: x509.Pkcs10CertificateRequest;
}

/**
 * Parses the first PEM block of pem as a CERTIFICATE REQUEST and checks its self-signature.
 * Throws an Error whose message is upstream's (`PEM block type must be CERTIFICATE REQUEST`,
 * `x509: …`). Synchronous (node:crypto verify), so validation can call it.
 */
export function parseCertificateRequest(pem: string | Uint8Array): ParsedCertificateRequest {
  const text = typeof pem === 'string' ? pem : Buffer.from(pem).toString('latin1');
  const block = firstPemBlock(text);
  if (!block || block.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let req: x509.Pkcs10CertificateRequest;
  try {
    req = new x509.Pkcs10CertificateRequest(block.der);
  } catch (err) {
    throw new Error(`asn1: structure error: ${(err as Error).message}`);
  }
  const tbs = firstInnerElement(block.der);
  const hash = (req.signatureAlgorithm as { hash?: { name?: string } }).hash?.name ?? 'SHA-256';
  let ok = false;
  try {
    const key = createPublicKey({ key: Buffer.from(req.publicKey.rawData), format: 'der', type: 'spki' });
    ok = cryptoVerify(hash.replace('-', '').toLowerCase(), tbs, key, Buffer.from(req.signature));
  } catch {
    ok = false;
  }
  if (!ok) throw new Error(req.publicKey.algorithm.name === 'ECDSA' ? 'x509: ECDSA verification failure' : 'crypto/rsa: verification error');
  const name = req.subjectName;
  const sans = subjectAltNames(req);
  const items = sans?.names.items ?? [];
  const of = (t: string) => items.filter((n) => n.type === t).map((n) => n.value);
  return {
    commonName: name.getField('CN')[0] ?? '',
    organizations: name.getField('O'),
    dnsNames: of('dns'), ips: of('ip'), emails: of('email'), uris: of('url'),
    keyAlgorithm: req.publicKey.algorithm.name,
    request: req,
  };
}

/** Key usages of the certificates.k8s.io API mapped to X.509 (upstream keyUsagesFromStrings). */
const KEY_USAGES: Record<string, number> = {
  'signing': x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};
const EXT_KEY_USAGES: Record<string, string> = {
  'any': '2.5.29.37.0',
  'server auth': x509.ExtendedKeyUsage.serverAuth,
  'client auth': x509.ExtendedKeyUsage.clientAuth,
  'code signing': x509.ExtendedKeyUsage.codeSigning,
  'email protection': x509.ExtendedKeyUsage.emailProtection,
  's/mime': x509.ExtendedKeyUsage.emailProtection,
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  'timestamping': x509.ExtendedKeyUsage.timeStamping,
  'ocsp signing': x509.ExtendedKeyUsage.ocspSigning,
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

export interface SignOptions {
  /** The API's spec.usages. */
  usages: readonly string[];
  /** The validity the signer grants (already capped by the caller). */
  durationMs: number;
  /** @default new Date() */
  now?: Date;
}

/** Upstream's backdate: notBefore is now minus 5 minutes (clock skew), less for short certificates. */
const BACKDATE_MS = 5 * 60_000;

/**
 * Signs req with ca: the request's subject, public key and subjectAltNames; key usages from
 * usages; notAfter capped at the CA's own notAfter (upstream authority.Sign). Returns the
 * certificate as PEM.
 */
export async function signCertificateRequest(ca: CertificateAuthority, req: ParsedCertificateRequest, o: SignOptions): Promise<string> {
  const now = (o.now ?? new Date()).getTime();
  // A certificate shorter than 2×backdate is backdated by only a fifth of its life (upstream).
  const backdate = o.durationMs < 2 * BACKDATE_MS ? Math.floor(o.durationMs / 5) : BACKDATE_MS;
  const notBefore = new Date(now - backdate);
  let notAfter = new Date(now - backdate + o.durationMs);
  if (notAfter > ca.cert.notAfter) notAfter = ca.cert.notAfter;
  let ku = 0;
  const eku: string[] = [];
  for (const u of o.usages) {
    if (KEY_USAGES[u] !== undefined) ku |= KEY_USAGES[u]!;
    else if (EXT_KEY_USAGES[u] !== undefined && !eku.includes(EXT_KEY_USAGES[u]!)) eku.push(EXT_KEY_USAGES[u]!);
  }
  const sanExt = subjectAltNames(req.request);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(), subject: req.request.subjectName, issuer: ca.cert.subjectName,
    notBefore, notAfter,
    publicKey: req.request.publicKey, signingKey: ca.key, signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      ...(ku ? [new x509.KeyUsagesExtension(ku, true)] : []),
      ...(eku.length ? [new x509.ExtendedKeyUsageExtension(eku, false)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false),
      ...(sanExt ? [new x509.SubjectAlternativeNameExtension(sanExt.names.toJSON(), false)] : []),
    ],
  }, webcrypto as unknown as Crypto);
  return cert.toString('pem');
}

/** The request's subjectAltName extension (extensionRequest attribute), parsed. */
function subjectAltNames(req: x509.Pkcs10CertificateRequest): x509.SubjectAlternativeNameExtension | undefined {
  const ext = req.extensions.find((e) => e.type === '2.5.29.17');
  return ext ? new x509.SubjectAlternativeNameExtension(ext.rawData) : undefined;
}

/** The first PEM block of text (Go's pem.Decode: text before it is skipped). */
function firstPemBlock(text: string): { type: string; der: Buffer } | undefined {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(text);
  if (!m) return undefined;
  const body = m[2]!;
  if (/^[\w-]+:/m.test(body)) return { type: `${m[1]!} (with headers)`, der: Buffer.alloc(0) };
  return { type: m[1]!, der: Buffer.from(body.replace(/\s+/g, ''), 'base64') };
}

/** The DER bytes of the first element inside the outer SEQUENCE (the CertificationRequestInfo that is signed). */
function firstInnerElement(der: Buffer): Buffer {
  const inner = headerLength(der, 0);
  const start = inner.header;
  const el = headerLength(der, start);
  return der.subarray(start, start + el.header + el.length);
}

function headerLength(b: Buffer, at: number): { header: number; length: number } {
  const first = b[at + 1] ?? 0;
  if (first < 0x80) return { header: 2, length: first };
  const n = first & 0x7f;
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + (b[at + 2 + i] ?? 0);
  return { header: 2 + n, length: len };
}

function serial(): string {
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = b[0]! & 0x7f | 0x01;
  return Buffer.from(b).toString('hex');
}
