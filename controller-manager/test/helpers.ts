/** Integration test helpers: see src/testing (also exported as @mk8s/controller-manager/testing). */
export * from '../src/testing/index.js';
