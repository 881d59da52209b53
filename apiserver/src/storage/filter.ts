import type { KubeObject } from '@mk8s/api';
import type { StorageEvent } from './interfaces.js';

// Memoized per source event, so watchers with selectors share converted events (and their encoding).
const startedMatching = new WeakMap<StorageEvent, StorageEvent>();
const stoppedMatching = new WeakMap<StorageEvent, StorageEvent>();

/**
 * Applies a selector predicate to one watch event as upstream's cacheWatcher does: an update that
 * makes an object start matching becomes ADDED, one that makes it stop matching becomes DELETED
 * (carrying the previous content at the event's resourceVersion). Returns undefined when the
 * watcher must not see the event. Without a known previous state, a non-matching update is dropped.
 */
export function filterWatchEvent(ev: StorageEvent, predicate: ((obj: KubeObject) => boolean) | undefined): StorageEvent | undefined {
  if (!predicate) return ev;
  switch (ev.type) {
    case 'ADDED':
    case 'DELETED':
      return predicate(ev.object) ? ev : undefined;
    case 'MODIFIED': {
      const cur = predicate(ev.object);
      const prev = ev.prevObject ? predicate(ev.prevObject) : cur;
      if (cur && prev) return ev;
      if (cur) {
        let add = startedMatching.get(ev);
        if (!add) { add = withKey({ type: 'ADDED', object: ev.object, resourceVersion: ev.resourceVersion }, ev); startedMatching.set(ev, add); }
        return add;
      }
      if (prev && ev.prevObject) {
        let del = stoppedMatching.get(ev);
        if (!del) {
          const object = { ...ev.prevObject, metadata: { ...ev.prevObject.metadata, resourceVersion: ev.resourceVersion } };
          del = withKey({ type: 'DELETED', object, resourceVersion: ev.resourceVersion, prevObject: ev.prevObject }, ev);
          stoppedMatching.set(ev, del);
        }
        return del;
      }
      return undefined;
    }
  }
}

function withKey(out: StorageEvent, from: StorageEvent): StorageEvent {
  if (from.key !== undefined) out.key = from.key;
  return out;
}

const encoded = new WeakMap<StorageEvent, string>();

/**
 * The wire form of a watch event, `{"type":…,"object":…}`, serialized once per event however many
 * watchers send it (the Cacher hands the same event object to every watcher).
 */
export function encodeWatchEvent(ev: StorageEvent): string {
  let s = encoded.get(ev);
  if (s === undefined) { s = JSON.stringify({ type: ev.type, object: ev.object }); encoded.set(ev, s); }
  return s;
}
