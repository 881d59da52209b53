export * from './resource-list.js';
export * from './evaluator.js';
export * from './limit-ranger.js';
