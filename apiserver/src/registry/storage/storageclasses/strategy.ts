import { StorageClasses } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** StorageClasses: no spec/status split, no behaviour beyond the generic Store and validation. */
export const storageClassStrategy: RestStrategy = { resource: StorageClasses, tracksGeneration: false };
