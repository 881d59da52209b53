/**
 * Printers for the core and cluster-administration kinds kubectl's everyday commands list
 * (PodTemplates, ResourceQuotas, LimitRanges, CertificateSigningRequests, events.k8s.io Events),
 * after upstream's printers.go. Local minimal shapes: only the fields the columns read.
 */
import type { Container } from '@mk8s/api';
import { canonicalQuantity, humanDuration } from '@mk8s/api';
import { AGE, NAME, age, col, define, formatLabels, type Printer } from './printer-kit.js';

interface PodTemplate { template?: { metadata?: { labels?: Record<string, string> }; spec?: { containers?: Container[] } } }

const podTemplatePrinter = define<PodTemplate>([
  NAME,
  col('Containers', 'string', 'Names of each container in the template.'),
  col('Images', 'string', 'Images referenced by each container in the template.'),
  col('Pod Labels', 'string', 'The labels for the pod template.'),
], (pt, meta) => {
  const cs = pt.template?.spec?.containers ?? [];
  return [meta.metadata.name, cs.map((c) => c.name).join(','), cs.map((c) => c.image ?? '').join(','), formatLabels(pt.template?.metadata?.labels)];
});

interface ResourceQuota { status?: { hard?: Record<string, string>; used?: Record<string, string> } }

const quantityText = (v: string | undefined): string => { try { return canonicalQuantity(v ?? '0'); } catch { return String(v); } };

/** printResourceQuota: `name: used/hard` pairs, limits.* in LIMIT and the rest in REQUEST, sorted by name. */
const resourceQuotaPrinter = define<ResourceQuota>([
  NAME, AGE,
  col('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
  col('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
], (rq, meta, now) => {
  const hard = rq.status?.hard ?? {}, used = rq.status?.used ?? {};
  const request: string[] = [], limit: string[] = [];
  for (const r of Object.keys(hard).sort()) {
    const pieces = r.split('.');
    (pieces.length > 1 && pieces[0] === 'limits' ? limit : request).push(`${r}: ${quantityText(used[r])}/${quantityText(hard[r])}`);
  }
  return [meta.metadata.name, age(meta, now), request.join(', '), limit.join(', ')];
});

const limitRangePrinter = define<object>([
  NAME,
  col('Created At', 'date', 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata'),
], (_lr, meta) => [meta.metadata.name, meta.metadata.creationTimestamp ?? null]);

interface Csr {
  spec?: { signerName?: string; username?: string; expirationSeconds?: number };
  status?: { conditions?: { type?: string }[]; certificate?: string };
}

/** extractCSRStatus: Denied, else Approved, else Pending; then ,Failed and ,Issued. */
export function csrCondition(csr: Csr): string {
  const types = new Set((csr.status?.conditions ?? []).map((c) => c.type));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (csr.status?.certificate) s += ',Issued';
  return s;
}

const csrPrinter = define<Csr>([
  NAME, AGE,
  col('SignerName', 'string', 'signerName indicates the requested signer, and is a qualified name.'),
  col('Requestor', 'string', 'request contains an x509 certificate signing request encoded in a "CERTIFICATE REQUEST" PEM block. When serialized as JSON or YAML, the data is additionally base64-encoded.'),
  col('RequestedDuration', 'string', 'expirationSeconds is the requested duration of validity of the issued certificate.'),
  col('Condition', 'string', 'conditions applied to the request. Known conditions are "Approved", "Denied", and "Failed".'),
], (csr, meta, now) => [
  meta.metadata.name, age(meta, now), csr.spec?.signerName || '<none>', csr.spec?.username ?? '',
  csr.spec?.expirationSeconds !== undefined && csr.spec.expirationSeconds !== null ? humanDuration(csr.spec.expirationSeconds * 1000) : '<none>',
  csrCondition(csr),
]);

/** group/resource → printer. */
export const ADMIN_PRINTERS: Record<string, Printer> = {
  '/podtemplates': podTemplatePrinter,
  '/resourcequotas': resourceQuotaPrinter,
  '/limitranges': limitRangePrinter,
  'certificates.k8s.io/certificatesigningrequests': csrPrinter,
};
