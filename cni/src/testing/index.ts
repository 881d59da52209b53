export { FakeLinkOps } from './fake-link-ops.js';
