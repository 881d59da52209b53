import { PriorityClasses } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** No behaviour beyond the generic Store. */
export const priorityClassStrategy: RestStrategy = { resource: PriorityClasses, tracksGeneration: false };
