import { Nodes } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** Nodes: the kubelet creates its Node with status; later status changes go through /status. */
export const nodeStrategy: RestStrategy = {
  resource: Nodes,
  tracksGeneration: false,
};
