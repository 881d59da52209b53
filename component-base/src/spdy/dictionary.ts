/**
 * The SPDY/3 header-compression dictionary (draft-mbelshe-httpbis-spdy-00 §2.6.10.1). Both zlib
 * streams of a session are primed with it; its Adler-32 travels as the zlib DICTID, so a single
 * wrong byte makes the peer refuse the first header block.
 *
 * It is a list of u32-length-prefixed header names and values followed by a run of raw text
 * (status codes, dates, MIME types); built here from those parts rather than a 1423-byte literal.
 */
const PREFIXED = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding',
  'accept-language', 'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection',
  'content-base', 'content-encoding', 'content-language', 'content-length', 'content-location',
  'content-md5', 'content-range', 'content-type', 'date', 'etag', 'expect', 'expires', 'from', 'host',
  'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since', 'last-modified',
  'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer',
  'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via',
  'warning', 'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url',
  'public', 'set-cookie', 'keep-alive', 'origin',
];

const RAW = '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505'
  + '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized'
  + '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable'
  + 'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT'
  + 'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,'
  + 'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

function build(): Buffer {
  const parts: Buffer[] = [];
  for (const w of PREFIXED) {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    parts.push(len, Buffer.from(w, 'latin1'));
  }
  parts.push(Buffer.from(RAW, 'latin1'));
  return Buffer.concat(parts);
}

/** The SPDY/3 zlib dictionary (read-only by convention; callers must not mutate it). */
export const SPDY3_DICTIONARY: Buffer = build();
