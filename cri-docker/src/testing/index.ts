export { startTestShim, ensureImages, waitFor, type TestShim, type TestShimOptions } from './test-shim.js';
