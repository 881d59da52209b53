/**
 * The browser for the dashboard's e2e tests: Debian's Chromium (scripts/setup.sh installs it),
 * driven headless by playwright-core (no browser download). The dashboard's certificate is signed
 * by the cluster CA, which this throwaway browser profile does not hold: HTTPS errors are ignored
 * in the browser, and the tests check the certificate against the CA with Node instead.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { KUBECONFIG, ROOT } from './cluster.js';

export const CHROMIUM = process.env['MK8S_CHROMIUM'] ?? '/usr/bin/chromium';
export const ARTIFACTS = join(ROOT, '.mk8s', 'artifacts', 'dashboard');
export const DASHBOARD = process.env['MK8S_DASHBOARD_URL'] ?? 'https://127.0.0.1:8443';
export const CA_FILE = join(ROOT, '.mk8s', 'pki', 'ca.crt');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return { context, page, errors };
}

/** Saves a full-page screenshot as .mk8s/artifacts/dashboard/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name.replace(/[^a-z0-9-]+/gi, '-')}.png`);
  await page.screenshot({ path, fullPage: true }).catch(() => undefined);
  return path;
}

/** `mkctl dashboard --url [args]`: the login URL it prints. */
export function loginUrl(args: string[] = []): string {
  const r = spawnSync(process.execPath, [join(ROOT, 'mkctl', 'dist', 'main.js'), '--kubeconfig', KUBECONFIG, 'dashboard', '--url', ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, MK8S_ROOT: ROOT } });
  if (r.status !== 0) throw new Error(`mkctl dashboard --url failed: ${r.stderr}`);
  const url = r.stdout.trim().split('\n').pop() ?? '';
  if (!url.startsWith('https://')) throw new Error(`mkctl dashboard --url printed ${r.stdout}`);
  return url;
}

/** A request to the dashboard from Node, verifying its certificate against the cluster CA. */
export function dashboardRequest(path: string, o: { method?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, DASHBOARD), { method: o.method ?? 'GET', headers: o.headers ?? {}, ca: readFileSync(CA_FILE), timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
