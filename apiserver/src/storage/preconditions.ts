import type { KubeObject } from '@mk8s/api';
import type { Preconditions } from './interfaces.js';
import { conflict } from './keys.js';

/** Throws Conflict (with upstream's message) when obj does not satisfy the preconditions. */
export function checkPreconditions(key: string, pre: Preconditions | undefined, obj: KubeObject): void {
  if (!pre) return;
  if (pre.uid !== undefined && pre.uid !== obj.metadata.uid) {
    throw conflict(key, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid ?? ''}`);
  }
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflict(key, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion ?? ''}`);
  }
}
