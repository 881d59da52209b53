/**
 * Table columns of the API-extension kinds, as upstream prints them: CustomResourceDefinitions
 * with the default table convertor (NAME, CREATED AT), APIServices as kube-aggregator does
 * (NAME, SERVICE, AVAILABLE, AGE), webhook configurations as kube-apiserver's printers (NAME, WEBHOOKS, AGE).
 */
import { translateTimestampSince, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type { Clock } from '@mk8s/component-base';
import { columnsTablePrinter } from '../apiextensions/custom-resource.js';
import type { TablePrinter } from './registry.js';

const AGE = { name: 'Age', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', cell: (o: KubeObject, now: number) => translateTimestampSince(o.metadata.creationTimestamp, now) };

export function crdPrinter(d: ResourceDescriptor, clock: Pick<Clock, 'now'>): TablePrinter {
  return columnsTablePrinter(d, [{ name: 'Created At', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', cell: (o) => o.metadata.creationTimestamp ?? null }], clock);
}

export function apiServicePrinter(d: ResourceDescriptor, clock: Pick<Clock, 'now'>): TablePrinter {
  return columnsTablePrinter(d, [
    { name: 'Service', type: 'string', description: 'The reference to the service that hosts this API endpoint.', cell: (o) => {
      const s = (o['spec'] as { service?: { namespace: string; name: string } } | undefined)?.service;
      return s ? `${s.namespace}/${s.name}` : 'Local';
    } },
    { name: 'Available', type: 'string', description: 'Whether this service is available.', cell: (o) => {
      const c = ((o['status'] as { conditions?: { type: string; status: string; reason?: string }[] } | undefined)?.conditions ?? []).find((x) => x.type === 'Available');
      if (!c) return 'Unknown';
      return c.status === 'True' ? 'True' : `${c.status} (${c.reason ?? ''})`;
    } },
    AGE,
  ], clock);
}

export function webhookConfigurationPrinter(d: ResourceDescriptor, clock: Pick<Clock, 'now'>): TablePrinter {
  return columnsTablePrinter(d, [
    { name: 'Webhooks', type: 'integer', description: 'Webhooks indicates the number of webhooks in this configuration.', cell: (o) => ((o['webhooks'] as unknown[] | undefined) ?? []).length },
    AGE,
  ], clock);
}
