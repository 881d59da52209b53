export { SPDY3_DICTIONARY } from './dictionary.js';
export { encodeFrame, FrameParser, SpdyProtocolError, FRAME, RST, FLAG_FIN, FLAG_UNIDIRECTIONAL, MAX_FRAME_PAYLOAD, SPDY_VERSION, type Frame } from './frames.js';
export { HeaderCompressor, HeaderDecompressor, encodeNameValueBlock, decodeNameValueBlock, type SpdyHeaders } from './headers.js';
export { SpdySession, SpdyStream, type SpdySessionOptions } from './session.js';
