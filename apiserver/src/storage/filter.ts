import type { KubeObject } from '@mk8s/api';
import type { StorageEvent } from './interfaces.js';

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
      if (cur) return withKey({ type: 'ADDED', object: ev.object, resourceVersion: ev.resourceVersion }, ev);
      if (prev && ev.prevObject) {
        // Memoized: many watchers with the same selector share one converted event.
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
