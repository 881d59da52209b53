import { Events } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** Event recorders PUT/PATCH aggregated events; a PUT may create one (upstream AllowCreateOnUpdate). */
export const eventStrategy: RestStrategy = { resource: Events, allowCreateOnUpdate: true };
