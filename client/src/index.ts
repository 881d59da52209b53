export type * from './interfaces.js';
export * from './rate-limiter.js';
export * from './rate-limiting-queue.js';
export * from './run-workers.js';
export * from './helpers.js';
