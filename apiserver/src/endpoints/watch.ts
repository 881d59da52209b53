/**
 * Serving a watch (apiserver endpoints/handlers/watch.go): headers are flushed at once, then one
 * JSON event per line on a chunked response, until the timeout, the client leaves, or the server
 * closes. A resourceVersion that is already compacted answers an HTTP 410 when the storage says
 * so before the first event; later it becomes an ERROR event.
 */
import type { WatchEvent } from '@mk8s/api';
import type { Clock } from '@mk8s/component-base';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JSON_CONTENT_TYPE, sendError, toApiError } from './status.js';
import { encodeObject } from '../registry/generic/store.js';

const EVENT_END = Buffer.from('}\n');
// A shared (frozen) event from the watch cache is encoded once for all its watchers.
const encodedEvents = new WeakMap<WatchEvent, Buffer>();
function encodeEvent(ev: WatchEvent): Buffer | string {
  if (!Object.isFrozen(ev)) return JSON.stringify(ev) + '\n';
  let b = encodedEvents.get(ev);
  if (!b) {
    b = Buffer.concat([Buffer.from(`{"type":${JSON.stringify(ev.type)},"object":`), encodeObject(ev.object as never), EVENT_END]);
    encodedEvents.set(ev, b);
  }
  return b;
}

export interface ServeWatchOptions {
  /** Opens the event stream; onProgress receives the store's revision when idle (bookmarks). */
  open(signal: AbortSignal, onProgress: (rv: string) => void): AsyncIterable<WatchEvent>;
  /** Encodes an event's object for the wire (Table conversion); `first` is true for the first event. */
  encode?(ev: WatchEvent, first: boolean): WatchEvent;
  /** Bookmark object for a revision, or undefined when bookmarks were not asked for. */
  bookmark?(rv: string): WatchEvent | undefined;
  timeoutMs: number;
  clock: Clock;
  /** Aborted when the server shuts down. */
  serverSignal: AbortSignal;
  /** How long to wait for an early 410 before committing to a 200 stream. */
  earlyErrorWindowMs?: number;
  onStart?(): void;
  onEnd?(): void;
  /** Called for every event written (apiserver_watch_events_total). */
  onEvent?(): void;
}

/** serveWatch hijacks the reply and streams events; resolves when the stream has ended. */
export async function serveWatch(_req: FastifyRequest, reply: FastifyReply, o: ServeWatchOptions): Promise<void> {
  const ac = new AbortController();
  const abort = () => ac.abort();
  // The response's close, not the request's: a bodyless request "closes" as soon as it is read.
  reply.raw.once('close', abort);
  o.serverSignal.addEventListener('abort', abort, { once: true });
  const cancelTimeout = o.clock.setTimeout(abort, o.timeoutMs);
  const pending: WatchEvent[] = [];
  let write: ((ev: WatchEvent) => void) | undefined;
  const onProgress = (rv: string) => {
    const bm = o.bookmark?.(rv);
    if (!bm) return;
    if (write) write(bm); else pending.push(bm);
  };
  const iterator = o.open(ac.signal, onProgress)[Symbol.asyncIterator]();
  let first: Promise<IteratorResult<WatchEvent>> | undefined = iterator.next();
  // Give the store a moment to reject a compacted resourceVersion so the client gets an HTTP 410.
  const early = await Promise.race([
    first.then((r) => ({ r }), (e: unknown) => ({ e })),
    // A real timer on purpose: this is an I/O heuristic, not a semantic timeout.
    new Promise<undefined>((resolve) => {
      const t = setTimeout(() => resolve(undefined), o.earlyErrorWindowMs ?? 25);
      ac.signal.addEventListener('abort', () => { clearTimeout(t); resolve(undefined); }, { once: true });
    }),
  ]);
  if (early && 'e' in early) {
    cleanup();
    sendError(reply, early.e);
    return;
  }
  o.onStart?.();
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': JSON_CONTENT_TYPE, 'transfer-encoding': 'chunked', 'cache-control': 'no-cache, private' });
  raw.flushHeaders();
  let sent = 0;
  write = (ev: WatchEvent) => {
    if (raw.writableEnded || raw.destroyed) return;
    const out = ev.type === 'ERROR' || ev.type === 'BOOKMARK' || !o.encode ? ev : o.encode(ev, sent === 0);
    if (ev.type !== 'BOOKMARK' && ev.type !== 'ERROR') sent++;
    raw.write(encodeEvent(out));
    o.onEvent?.();
  };
  for (const ev of pending.splice(0)) write(ev);
  try {
    for (;;) {
      const r = first ? await first : await iterator.next();
      first = undefined;
      if (r.done || ac.signal.aborted) break;
      write(r.value);
      if (raw.writableNeedDrain) await waitDrain(raw, ac.signal);
    }
  } catch (err) {
    if (!ac.signal.aborted) {
      const apiErr = toApiError(err);
      write({ type: 'ERROR', object: apiErr.toStatus() as never });
    }
  } finally {
    cleanup();
    ac.abort();
    void iterator.return?.();
    if (!raw.writableEnded && !raw.destroyed) raw.end();
    o.onEnd?.();
  }

  function cleanup() {
    cancelTimeout();
    reply.raw.off('close', abort);
    o.serverSignal.removeEventListener('abort', abort);
  }
}

function waitDrain(raw: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { raw.off('drain', done); signal.removeEventListener('abort', done); resolve(); };
    raw.on('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

