/**
 * The scraper (upstream pkg/scraper): every node's kubelet `/metrics/resource` read in parallel,
 * each within a timeout (90% of the resolution, as upstream), decoded and merged into one batch.
 * A node that fails (unreachable, non-200, malformed text) is left out of the round, logged, and
 * counted in `metrics_server_kubelet_request_total{success="false"}`.
 */
import { request as httpsRequest } from 'node:https';
import type { Clock, Logger } from '@mk8s/component-base';
import { decodeBatch, emptyBatch, mergeBatches, type MetricsBatch } from './decode.js';
import type { MetricsServerMetrics } from './metrics.js';

export type AddressType = 'Hostname' | 'InternalDNS' | 'InternalIP' | 'ExternalDNS' | 'ExternalIP';
export const DEFAULT_ADDRESS_TYPES: readonly AddressType[] = ['InternalIP', 'Hostname', 'InternalDNS', 'ExternalDNS', 'ExternalIP'];

export interface NodeLike {
  metadata: { name: string };
  status?: { addresses?: readonly { type: string; address: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
}

export interface KubeletTarget { node: string; address: string; port: number }

/** Where to reach node's kubelet (upstream's address resolver); undefined when it has no usable address. */
export function kubeletTarget(node: NodeLike, o: { addressTypes?: readonly AddressType[]; port?: number; useNodeStatusPort?: boolean } = {}): KubeletTarget | undefined {
  const addrs = node.status?.addresses ?? [];
  for (const t of o.addressTypes ?? DEFAULT_ADDRESS_TYPES) {
    const a = addrs.find((x) => x.type === t && x.address);
    if (!a) continue;
    const statusPort = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
    const port = o.useNodeStatusPort && statusPort ? statusPort : o.port ?? 10250;
    return { node: node.metadata.name, address: a.address, port };
  }
  return undefined;
}

/** Reads a kubelet's resource metrics. Rejects on any failure (network, TLS, non-200, timeout). Concurrent calls are fine. */
export interface KubeletClient {
  getResourceMetrics(t: KubeletTarget, signal: AbortSignal): Promise<string>;
}

export interface HttpsKubeletClientOptions {
  /** The CA that signed the kubelets' serving certificates (--kubelet-certificate-authority); undefined + insecure: not verified. */
  ca?: string;
  /** --kubelet-insecure-tls */
  insecure?: boolean;
  /** Bearer token presented to the kubelet (the ServiceAccount's). Read at each request (rotation). */
  token?: () => string | undefined;
  /** Client certificate instead of (or with) the token (--kubelet-client-certificate/--kubelet-client-key). */
  clientCert?: { cert: string; key: string };
}

/** A KubeletClient over HTTPS (node:https; one connection a request, as scrapes are 15 s apart). */
export function httpsKubeletClient(o: HttpsKubeletClientOptions): KubeletClient {
  return {
    getResourceMetrics(t, signal) {
      return new Promise<string>((resolve, reject) => {
        const token = o.token?.();
        const host = t.address.includes(':') ? `[${t.address}]` : t.address;
        const req = httpsRequest(`https://${host}:${t.port}/metrics/resource`, {
          method: 'GET', signal, agent: false,
          ...(o.ca ? { ca: o.ca } : {}), rejectUnauthorized: !o.insecure,
          ...(o.clientCert ?? {}),
          headers: { accept: 'text/plain;version=0.0.4', 'user-agent': 'metrics-server/v0.1.0', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) reject(new Error(`request failed, status: "${res.statusCode} ${res.statusMessage ?? ''}"${body ? `: ${body.slice(0, 200)}` : ''}`));
            else resolve(body);
          });
        });
        req.on('error', reject);
        req.end();
      });
    },
  };
}

export interface ScraperOptions {
  client: KubeletClient;
  clock: Clock;
  logger: Logger;
  /** Per-node deadline. */
  timeoutMs: number;
  metrics?: MetricsServerMetrics;
}

export class Scraper {
  constructor(private readonly o: ScraperOptions) {}

  /** Scrapes every target in parallel; never rejects (failed nodes are left out). */
  async scrape(targets: readonly KubeletTarget[], signal: AbortSignal): Promise<MetricsBatch> {
    const batches = await Promise.all(targets.map((t) => this.scrapeOne(t, signal)));
    return mergeBatches(batches);
  }

  private async scrapeOne(t: KubeletTarget, parent: AbortSignal): Promise<MetricsBatch> {
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    parent.addEventListener('abort', onAbort, { once: true });
    const cancelTimer = this.o.clock.setTimeout(() => ac.abort(new Error(`timeout after ${this.o.timeoutMs}ms`)), this.o.timeoutMs);
    const start = this.o.clock.now();
    try {
      const text = await this.o.client.getResourceMetrics(t, ac.signal);
      const at = this.o.clock.now();
      const batch = decodeBatch(text, at, t.node);
      this.o.metrics?.kubeletRequests.labels('true').inc();
      this.o.metrics?.kubeletRequestDuration.labels(t.node).observe((at - start) / 1000);
      this.o.metrics?.kubeletLastRequest.labels(t.node).set(at / 1000);
      return batch;
    } catch (err) {
      this.o.metrics?.kubeletRequests.labels('false').inc();
      this.o.logger.warn({ err, node: t.node, address: `${t.address}:${t.port}` }, 'Failed to scrape node');
      return emptyBatch();
    } finally {
      cancelTimer();
      parent.removeEventListener('abort', onAbort);
    }
  }
}
