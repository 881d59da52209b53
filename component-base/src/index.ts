export { createLogger, silentLogger, type Logger, type LoggerConfig } from './logger.js';
export { realClock, type Clock } from './clock.js';
export { runEvery, type RunEveryOptions } from './run-every.js';
export { setupSignalHandler } from './signals.js';
export { runComponents, startAfter, type Component } from './component.js';
export { serveHealth, type HealthServerOptions } from './serving.js';
export { newRegistry, metricOnce } from './metrics.js';
export { parseFlags, type FlagSpec } from './flags.js';
export { FeatureGate, defaultFeatureGate, parseFeatureGates, setFeatureGatesFlag, KNOWN_FEATURES, type Feature, type FeatureSpec, type PreRelease } from './featuregate.js';
export {
  SpdySession, SpdyStream, SpdyProtocolError, FrameParser, encodeFrame, encodeNameValueBlock, decodeNameValueBlock, SPDY3_DICTIONARY,
  type SpdySessionOptions, type SpdyHeaders, type Frame as SpdyFrame,
} from './spdy/index.js';
