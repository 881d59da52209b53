/**
 * CertificateSigningRequest validation (upstream pkg/apis/certificates/validation): the request
 * must be a signed PKCS#10 PEM block, usages known and unique, signerName a qualified name,
 * expirationSeconds ≥ 600, conditions well-formed; updates may not remove Approved/Denied/Failed
 * conditions, only /approval may add or change Approved/Denied, only /status may set the
 * certificate, and once set it is immutable. Pure.
 */
import { field, isDNS1123Label, isDNS1123Subdomain, type FieldError } from '@mk8s/api';
import { parseCertificateRequest } from '@mk8s/component-base/pki';
import { X509Certificate } from 'node:crypto';
import type { UpdateTarget } from '../../generic/strategy.js';

/** The well-known signers (certificates/v1 constants). */
export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

/** Upstream's allValidUsages, sorted as sets.String.List() prints them. */
export const VALID_USAGES: readonly string[] = [
  'any', 'cert sign', 'client auth', 'code signing', 'content commitment', 'crl sign', 'data encipherment', 'decipher only',
  'digital signature', 'email protection', 'encipher only', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'key agreement',
  'key encipherment', 'microsoft sgc', 'netscape sgc', 'ocsp signing', 's/mime', 'server auth', 'signing', 'timestamping',
];
const TRUE_ONLY_TYPES = new Set(['Approved', 'Denied', 'Failed']);

export interface CsrCondition { type?: string; status?: string; reason?: string; message?: string; lastUpdateTime?: string; lastTransitionTime?: string }
export interface Csr {
  metadata?: { name?: string };
  spec?: { request?: string; signerName?: string; expirationSeconds?: number; usages?: string[]; username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  status?: { conditions?: CsrCondition[]; certificate?: string };
}

/** Decodes a JSON `[]byte` (base64); undefined when it is not base64 at all. */
export function bytesOf(b64: string | undefined): Buffer {
  return Buffer.from(b64 ?? '', 'base64');
}

/** Go's %#v of a []byte, as field.Invalid prints the request. */
function goBytes(b: Buffer): field.GoRepr {
  return new field.GoRepr(`[]byte{${[...b].map((x) => `0x${x.toString(16)}`).join(', ')}}`);
}

interface Options {
  allowSettingApprovalConditions: boolean;
  allowSettingCertificate: boolean;
  allowBothApprovedAndDenied: boolean;
  allowLegacySignerName: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
  allowArbitraryCertificate: boolean;
  allowUnknownUsages: boolean;
  allowDuplicateUsages: boolean;
}

/** Create validation (ValidateCertificateSigningRequestCreate). */
export function validateCsrCreate(csr: Csr): FieldError[] {
  return validateCsr(csr, optionsFor(csr, undefined));
}

/** Update validation through the main resource, /status or /approval. */
export function validateCsrUpdate(next: Csr, prev: Csr, target: UpdateTarget): FieldError[] {
  const o = optionsFor(next, prev);
  if (target === 'status') o.allowSettingCertificate = true;
  if (target === 'approval') o.allowSettingApprovalConditions = true;
  const errs = validateCsr(next, o);
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (conditionsOf(next, t).length < conditionsOf(prev, t).length) {
      errs.push(field.forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
    }
  }
  if (!o.allowSettingApprovalConditions) {
    for (const t of ['Approved', 'Denied']) {
      const before = conditionsOf(prev, t), after = conditionsOf(next, t);
      if (after.length > before.length) errs.push(field.forbidden('status.conditions', `updates may not add a condition of type "${t}"`));
      else if (after.length === before.length && JSON.stringify(before) !== JSON.stringify(after)) {
        errs.push(field.forbidden('status.conditions', `updates may not modify a condition of type "${t}"`));
      }
    }
  }
  const newCert = bytesOf(next.status?.certificate), oldCert = bytesOf(prev.status?.certificate);
  if (!newCert.equals(oldCert)) {
    if (!o.allowSettingCertificate) errs.push(field.forbidden('status.certificate', 'updates may not set certificate content'));
    else if (oldCert.length > 0) errs.push(field.forbidden('status.certificate', 'updates may not modify existing certificate content'));
  }
  return errs;
}

function validateCsr(csr: Csr, o: Options): FieldError[] {
  const errs: FieldError[] = [];
  const spec = csr.spec ?? {};
  const request = bytesOf(spec.request);
  try {
    parseCertificateRequest(request);
  } catch (err) {
    errs.push(field.invalid('spec.request', goBytes(request), (err as Error).message));
  }
  const usages = spec.usages ?? [];
  if (usages.length === 0) errs.push(field.required('spec.usages'));
  if (!o.allowUnknownUsages) {
    usages.forEach((u, i) => { if (!VALID_USAGES.includes(u)) errs.push(field.notSupported(`spec.usages[${i}]`, u, VALID_USAGES)); });
  }
  if (!o.allowDuplicateUsages) {
    const seen = new Set<string>();
    usages.forEach((u, i) => { if (seen.has(u)) errs.push(field.duplicate(`spec.usages[${i}]`, u)); seen.add(u); });
  }
  if (!o.allowLegacySignerName && spec.signerName === LEGACY_UNKNOWN_SIGNER) {
    errs.push(field.invalid('spec.signerName', spec.signerName, 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName('spec.signerName', spec.signerName ?? ''));
  }
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds !== null && spec.expirationSeconds < 600) {
    errs.push(field.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  errs.push(...validateConditions(csr, o));
  if (!o.allowArbitraryCertificate) {
    const err = certificateError(bytesOf(csr.status?.certificate));
    if (err) errs.push(field.invalid('status.certificate', '<certificate data>', err));
  }
  return errs;
}

function validateConditions(csr: Csr, o: Options): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false, denied = false;
  (csr.status?.conditions ?? []).forEach((c, i) => {
    const p = `status.conditions[${i}]`;
    const type = c.type ?? '';
    if (!o.allowEmptyConditionType && type === '') errs.push(field.required(`${p}.type`));
    const allowed = TRUE_ONLY_TYPES.has(type) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(field.required(`${p}.status`));
    else if (!allowed.includes(c.status)) errs.push(field.notSupported(`${p}.status`, c.status, allowed));
    if (!o.allowBothApprovedAndDenied) {
      if (type === 'Approved') { approved = true; if (denied) errs.push(field.invalid(`${p}.type`, type, 'Approved and Denied conditions are mutually exclusive')); }
      if (type === 'Denied') { denied = true; if (approved) errs.push(field.invalid(`${p}.type`, type, 'Approved and Denied conditions are mutually exclusive')); }
    }
    if (!o.allowDuplicateConditionTypes) {
      if (seen.has(type)) errs.push(field.duplicate(`${p}.type`, type));
      seen.add(type);
    }
  });
  return errs;
}

/** ValidateSignerName (core validation): `<domain>/<path>`, the domain with at least two labels. */
export function validateSignerName(path: string, signerName: string): FieldError[] {
  if (signerName === '') return [field.required(path)];
  const segments = signerName.split('/');
  if (segments.length !== 2) return [field.invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, rest] = segments as [string, string];
  const errs: FieldError[] = [];
  if (domain.length > 253) errs.push(field.tooLong(path, domain, 253));
  const labels = domain.split('.');
  for (const l of labels) {
    const e = isDNS1123Label(l);
    if (e.length) { for (const m of e) errs.push(field.invalid(path, domain, `validating label "${l}": ${m}`)); break; }
  }
  if (labels.length < 2) errs.push(field.invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const l of rest.split('.')) {
    const e = isDNS1123Subdomain(l);
    if (e.length) { for (const m of e) errs.push(field.invalid(path, rest, `validating label "${l}": ${m}`)); break; }
  }
  if (rest.length > 253) errs.push(field.tooLong(path, rest, 253));
  return errs;
}

/** validateCertificate: empty, or one or more CERTIFICATE PEM blocks without headers that parse. */
function certificateError(pem: Buffer): string | undefined {
  if (pem.length === 0) return undefined;
  const text = pem.toString('latin1');
  const re = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  let blocks = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[1] !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found "${m[1]}"`;
    if (/^[\w-]+:/m.test(m[2]!)) return 'no PEM block headers are permitted';
    blocks++;
    try { new X509Certificate(Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64')); } catch (err) { return `x509: malformed certificate: ${(err as Error).message}`; }
  }
  return blocks === 0 ? 'must contain at least one CERTIFICATE PEM block' : undefined;
}

export function conditionsOf(csr: Csr, type: string): CsrCondition[] {
  return (csr.status?.conditions ?? []).filter((c) => c.type === type);
}

/** getValidationOptions: what updates tolerate because the stored object already has it. */
function optionsFor(next: Csr, prev: Csr | undefined): Options {
  const types = (prev?.status?.conditions ?? []).map((c) => c.type ?? '');
  const prevUsages = prev?.spec?.usages ?? [];
  return {
    allowSettingApprovalConditions: false,
    allowSettingCertificate: false,
    allowBothApprovedAndDenied: !!prev && types.includes('Approved') && types.includes('Denied'),
    allowLegacySignerName: prev?.spec?.signerName === LEGACY_UNKNOWN_SIGNER,
    allowDuplicateConditionTypes: !!prev && new Set(types).size !== types.length,
    allowEmptyConditionType: !!prev && types.includes(''),
    allowArbitraryCertificate: !!prev && (bytesOf(next.status?.certificate).equals(bytesOf(prev.status?.certificate))
      || certificateError(bytesOf(prev.status?.certificate)) !== undefined),
    allowUnknownUsages: prevUsages.some((u) => !VALID_USAGES.includes(u)),
    allowDuplicateUsages: new Set(prevUsages).size !== prevUsages.length,
  };
}
