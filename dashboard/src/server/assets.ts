/** Loads the built single-page app (dist/app, made by `make build`) into memory. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { Asset } from './server.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.map': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon',
};

/** Every file directly under dir, keyed by '/<name>'. Throws when the app is not built. */
export function loadAssets(dir: string): Map<string, Asset> {
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`no built dashboard app in ${dir}: run make build`);
  const out = new Map<string, Asset>();
  for (const f of readdirSync(dir)) {
    const type = TYPES[extname(f)];
    if (type) out.set(`/${f}`, { contentType: type, body: readFileSync(join(dir, f)) });
  }
  return out;
}
