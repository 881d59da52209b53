import { ControllerRevisions } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** ControllerRevisions have no spec or status; data is immutable (validation). */
export const controllerRevisionStrategy: RestStrategy = {
  resource: ControllerRevisions,
  tracksGeneration: false,
};
