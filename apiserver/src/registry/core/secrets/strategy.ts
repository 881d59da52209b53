import { Secrets } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** No behaviour beyond the generic Store. */
export const secretStrategy: RestStrategy = { resource: Secrets };
