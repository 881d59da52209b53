#!/usr/bin/env node
/**
 * Bundles the single-page app (src/app) into dist/app with esbuild: app.js (ES module, minified),
 * app.css and index.html. `make build` runs it after `tsc -b` (which type-checks src/app through
 * tsconfig.app.json). Only sources are committed; dist/ is built.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'app');
mkdirSync(out, { recursive: true });
const started = Date.now();
const result = await build({
  entryPoints: { app: join(root, 'src', 'app', 'main.tsx') },
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  // Shared code (api/'s duration) from its TypeScript sources, as the tests run it.
  conditions: ['@mk8s/source'],
  metafile: true,
  logLevel: 'warning',
});
copyFileSync(join(root, 'src', 'app', 'index.html'), join(out, 'index.html'));
const bytes = Object.entries(result.metafile.outputs).filter(([f]) => !f.endsWith('.map')).reduce((n, [, o]) => n + o.bytes, 0);
console.log(`build: dashboard app → ${out} (${Math.round(bytes / 1024)} KiB, ${Date.now() - started} ms)`);
