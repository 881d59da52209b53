/**
 * Event recorder (client-go tools/record): writes core/v1 Events about objects, in the object's
 * namespace ('default' for cluster-scoped objects). Identical events within 10 minutes are
 * aggregated by bumping count and lastTimestamp with a patch, as upstream's EventCorrelator does.
 * Non-blocking: event() queues; a background chain writes in order and never throws to the caller.
 */
import { Events, isNotFound, type KubeObject } from '@mk8s/api';
import { realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';
import type { Clientset, EventRecorder, EventType } from './interfaces.js';
import { formatMessage } from './format.js';

/** Options for {@link createEventRecorder}. */
export interface EventRecorderOptions {
  client: Clientset;
  /** source.component and reportingComponent, e.g. 'deployment-controller', 'default-scheduler', 'kubelet'. */
  component: string;
  /** source.host (kubelet: the node name) and reportingInstance. */
  host?: string;
  clock?: Clock;
  logger?: Logger;
  /** Events queued beyond this are dropped (with a log line). @default 1000 */
  maxQueued?: number;
  /** How long an identical event is aggregated into the previous one. @default 600_000 */
  aggregateWindowMs?: number;
}

export interface EventRecorderWithFlush extends EventRecorder {
  /** Resolves once every event queued so far has been written (or given up on). */
  flush(): Promise<void>;
}

type InvolvedSource = Parameters<EventRecorder['event']>[0];
interface Seen { name: string; namespace: string; count: number; firstTimestamp: string; lastSeen: number }

const CACHE_SIZE = 4096;
/** Upstream's EventSourceObjectSpamFilter: per source+object, 25 events, then one per 5 minutes. */
const SPAM_BURST = 25;
const SPAM_REFILL_MS = 300_000;
/** Upstream's EventAggregator: from the 10th distinct message with one reason in the window, combine. */
const AGGREGATE_MAX_EVENTS = 10;
const AGGREGATE_PREFIX = '(combined from similar events): ';
const DROP_LOG_INTERVAL_MS = 10_000;
const time = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** createEventRecorder returns a recorder writing through client. */
export function createEventRecorder(o: EventRecorderOptions): EventRecorderWithFlush {
  const clock = o.clock ?? realClock;
  const log = (o.logger ?? silentLogger()).child({ component: o.component });
  const windowMs = o.aggregateWindowMs ?? 600_000;
  const maxQueued = o.maxQueued ?? 1000;
  // Insertion-ordered Map as an LRU of recently written events, keyed like upstream's aggregate key.
  const seen = new Map<string, Seen>();
  let chain: Promise<void> = Promise.resolve();
  let queued = 0;
  let seq = 0n;
  const spam = new Map<string, { tokens: number; last: number }>();
  const similar = new Map<string, { messages: Set<string>; first: number }>();
  let dropped = 0;
  let lastDropLog = -Infinity;

  /** True when the source+object bucket still has a token (events beyond it are dropped). */
  function allow(objKey: string, now: number): boolean {
    const b = spam.get(objKey) ?? { tokens: SPAM_BURST, last: now };
    b.tokens = Math.min(SPAM_BURST, b.tokens + (now - b.last) / SPAM_REFILL_MS);
    b.last = now;
    spam.delete(objKey); spam.set(objKey, b);
    if (spam.size > CACHE_SIZE) spam.delete(spam.keys().next().value!);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** The message to write: after many distinct messages for one reason, they collapse into one event. */
  function aggregate(aggKey: string, message: string, now: number): { message: string; combined: boolean } {
    let rec = similar.get(aggKey);
    if (!rec || now - rec.first >= windowMs) { rec = { messages: new Set(), first: now }; similar.set(aggKey, rec); }
    if (similar.size > CACHE_SIZE) similar.delete(similar.keys().next().value!);
    rec.messages.add(message);
    return rec.messages.size >= AGGREGATE_MAX_EVENTS ? { message: AGGREGATE_PREFIX + message, combined: true } : { message, combined: false };
  }

  async function write(obj: InvolvedSource, type: EventType, reason: string, rawMessage: string, now: number): Promise<void> {
    const meta = obj.metadata ?? {};
    const objKey = JSON.stringify([o.component, o.host ?? '', obj.kind, meta.namespace ?? '', meta.name, meta.uid ?? '', obj.apiVersion ?? '']);
    if (!allow(objKey, now)) { log.debug({ reason, object: `${meta.namespace ?? ''}/${meta.name ?? ''}` }, 'Dropped event: too many for this object'); return; }
    const agg = aggregate(`${objKey}|${type}|${reason}`, rawMessage, now);
    const message = agg.message;
    const namespace = meta.namespace || 'default';
    const involvedObject = {
      kind: obj.kind, namespace: meta.namespace, name: meta.name, uid: meta.uid, apiVersion: obj.apiVersion, resourceVersion: meta.resourceVersion,
    };
    // A combined event is one record whatever its latest message: count it by reason alone.
    const key = `${objKey}|${type}|${reason}|${agg.combined ? AGGREGATE_PREFIX : message}`;
    const events = o.client.resource(Events, namespace);
    const prev = seen.get(key);
    if (prev && now - prev.lastSeen < windowMs) {
      try {
        await events.patch(prev.name, 'merge', { count: prev.count + 1, lastTimestamp: time(now), message });
        prev.count++;
        prev.lastSeen = now;
        seen.delete(key); seen.set(key, prev);
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The event was deleted (TTL): record it afresh below.
      }
    }
    const name = `${meta.name ?? 'unknown'}.${(BigInt(now) * 1_000_000n + (seq++ % 1_000_000n)).toString(16)}`;
    const ev = {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name, namespace },
      involvedObject: Object.fromEntries(Object.entries(involvedObject).filter(([, v]) => v !== undefined && v !== '')),
      reason, message, type,
      source: { component: o.component, ...(o.host ? { host: o.host } : {}) },
      firstTimestamp: time(now), lastTimestamp: time(now), count: 1,
      reportingComponent: o.component, reportingInstance: o.host ?? '',
    } as unknown as KubeObject;
    await events.create(ev);
    seen.set(key, { name, namespace, count: 1, firstTimestamp: time(now), lastSeen: now });
    if (seen.size > CACHE_SIZE) seen.delete(seen.keys().next().value!);
  }

  return {
    event(obj, type, reason, messageFmt, ...args) {
      try {
        if (queued >= maxQueued) {
          // A burst (a scheduler binding thousands of pods) drops thousands: one log line per 10 s, not one each.
          dropped++;
          const now = clock.now();
          if (now - lastDropLog >= DROP_LOG_INTERVAL_MS) { log.warn({ reason, dropped }, 'Dropped events: queue full'); lastDropLog = now; dropped = 0; }
          return;
        }
        const message = formatMessage(messageFmt, args);
        const now = clock.now();
        queued++;
        chain = chain
          .then(() => write(obj, type, reason, message, now))
          .catch((err: unknown) => log.warn({ err, reason, object: `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}` }, 'Could not write event'))
          .finally(() => { queued--; });
      } catch (err) {
        log.warn({ err }, 'Could not queue event');
      }
    },
    flush: () => chain,
  };
}
