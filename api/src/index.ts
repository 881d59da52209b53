export * from './scheme.js';
export type * from './types.js';
export * from './errors.js';
