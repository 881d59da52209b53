export * from './scheme.js';
export type * from './types.js';
