/**
 * Static bearer tokens (--token-auth-file, apiserver authentication/token/tokenfile): a CSV of
 * `token,user,uid,"group1,group2"`. Unknown tokens get no opinion, so a later authenticator (the
 * ServiceAccount one) may still accept them.
 */
import type { IncomingMessage } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { Authenticator, UserInfo } from './authentication.js';
import { AUTHENTICATED_GROUP } from './x509.js';
import { timingSafeEqual } from 'node:crypto';

/** The bearer token of a request, if any (`Authorization: Bearer <token>`, case-insensitive scheme). */
export function bearerToken(req: Pick<IncomingMessage, 'headers'>): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

/** Parses the token file; throws on a malformed line (upstream refuses to start). */
export function parseTokenFile(text: string): Map<string, UserInfo> {
  const out = new Map<string, UserInfo>();
  let lineNo = 0;
  for (const raw of text.split(/\r?\n/)) {
    lineNo++;
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = splitCsv(line);
    if (fields.length < 3) throw new Error(`token file: line ${lineNo}: expected token,user,uid[,"groups"]`);
    const [token, username, uid, groups] = fields as [string, string, string, string | undefined];
    if (!token || !username) throw new Error(`token file: line ${lineNo}: empty token or user`);
    const gs = (groups ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
    out.set(token, { username, ...(uid ? { uid } : {}), groups: [...gs, AUTHENTICATED_GROUP] });
  }
  return out;
}

/** RFC 4180-ish: quoted fields may hold commas and doubled quotes. */
function splitCsv(line: string): string[] {
  const out: string[] = []; let cur = ''; let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (c === '"') quoted = false; else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { out.push(cur.trim()); cur = ''; } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

export class TokenFileAuthenticator implements Authenticator {
  readonly name = 'tokenfile';
  constructor(private readonly tokens: Map<string, UserInfo>) {}

  static async fromFile(path: string): Promise<TokenFileAuthenticator> {
    return new TokenFileAuthenticator(parseTokenFile(await readFile(path, 'utf8')));
  }

  authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const token = bearerToken(req);
    if (!token) return Promise.resolve(undefined);
    // Compare against each in constant time so the lookup does not leak a prefix match.
    const given = Buffer.from(token);
    for (const [t, user] of this.tokens) {
      const b = Buffer.from(t);
      if (b.length === given.length && timingSafeEqual(b, given)) return Promise.resolve(user);
    }
    return Promise.resolve(undefined);
  }
}
