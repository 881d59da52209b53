export * from './conformance.js';
