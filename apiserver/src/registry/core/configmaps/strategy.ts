import { ConfigMaps } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** No behaviour beyond the generic Store. */
export const configMapStrategy: RestStrategy = { resource: ConfigMaps };
