/**
 * The dashboard's browser-facing protections, as pure functions: response headers against
 * clickjacking, script injection and referrer leaks, and the CSRF check on mutating calls.
 */

/**
 * Content-Security-Policy: only the dashboard's own script and style (no inline script, no eval),
 * API calls only to itself, never framed.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'",
  "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

/** Headers every response carries (pages, assets, proxied API answers, errors). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'strict-transport-security': 'max-age=31536000',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

/** The header the SPA sends on every API call; a cross-site form or image cannot set it. */
export const CSRF_HEADER = 'x-mk8s-dashboard';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The headers of a request the CSRF check reads (lower-case names, as Node gives them). */
export interface RequestHeaders {
  host?: string | undefined;
  origin?: string | undefined;
  'sec-fetch-site'?: string | undefined;
  [CSRF_HEADER]?: string | string[] | undefined;
}

/**
 * Why a request must be refused as cross-site (undefined: allowed). Reads only: always allowed.
 * Mutations must carry CSRF_HEADER (which forces a CORS preflight the dashboard never grants),
 * and an Origin, when sent, must be the dashboard's own; Sec-Fetch-Site, when sent, same-origin.
 */
export function csrfRefusal(method: string, h: RequestHeaders): string | undefined {
  if (SAFE_METHODS.has(method.toUpperCase())) return undefined;
  if (!h[CSRF_HEADER]) return `${method} requests must carry the ${CSRF_HEADER} header`;
  if (h.origin !== undefined && h.origin !== `https://${h.host ?? ''}`) return `origin ${h.origin} is not this dashboard's`;
  const site = h['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `cross-site request (Sec-Fetch-Site: ${site})`;
  return undefined;
}

/** The bearer token of an Authorization header, or undefined when there is none (or another scheme). */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^Bearer +([^\s]+)\s*$/i.exec(authorization ?? '');
  return m?.[1];
}

/**
 * True for the API paths the proxy forwards: /api, /apis and below, with no dot segments
 * (encoded or not) that could climb out of them on the apiserver.
 */
export function isProxiedPath(url: string): boolean {
  const path = url.split('?')[0] ?? '';
  if (!/^\/apis?(\/|$)/.test(path)) return false;
  let decoded: string;
  try { decoded = decodeURIComponent(path); } catch { return false; }
  return !decoded.split('/').some((seg) => seg === '..' || seg === '.') && !decoded.includes('\\');
}
