/**
 * The dashboard's chain view in a real browser (playwright-core driving Debian's chromium) on the
 * real cluster, logged in through the URL `mkctl dashboard --url KIND/NAME -n NS` prints: a pod
 * whose image does not exist shows its chain broken at "image" with the runtime's pull error, the
 * steps after it not reached; a healthy Deployment behind a Service shows every link ok, and
 * follows a scale-up live (no reload). Each test saves a screenshot as an artifact.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, loginUrl, newPage, screenshot } from './lib/browser.js';

const ns = uniqueName('e2e-chain');
const MISSING = 'mk8s/does-not-exist:1';

const manifests = `
apiVersion: v1
kind: Pod
metadata: {name: missing, namespace: ${ns}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: "${MISSING}", imagePullPolicy: IfNotPresent}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: mk8s/testserver:1.0
        imagePullPolicy: Never
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /readyz, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`;

let browser: Browser;
let page: Page;
let pageErrors: string[] = [];

before(async () => {
  kubectlOk(['create', 'namespace', ns]);
  kubectlOk(['apply', '-f', '-'], { input: manifests });
  browser = await launchBrowser();
  ({ page, errors: pageErrors } = await newPage(browser));
});

after(async () => {
  await browser?.close();
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

/** The chain's links as "step:status", in order, as the page shows them. */
async function links(p: Page): Promise<string[]> {
  return p.locator('[data-testid=chain] li.chain-link').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-step')}:${e.getAttribute('data-status')}`));
}

test('a pod with a missing image: the chain is broken at image, with the pull error', async (t) => {
  t.after(() => screenshot(page, 'chain-missing-image'));
  await page.goto(loginUrl(['pod/missing', '-n', ns]));
  const chain = page.locator('[data-testid=chain]');
  // Live: the page is open before the kubelet has tried (and failed) to pull; no reload.
  await chain.and(page.locator('[data-first-broken=image]')).waitFor({ timeout: 120_000 });
  const image = chain.locator('li.chain-link[data-step=image]');
  const text = await image.innerText();
  assert.match(text, /Broken/, 'the status is written, not only coloured');
  assert.match(text, /First broken link/);
  assert.match(text, new RegExp(`(ErrImagePull|ImagePullBackOff) for ${MISSING.replace(/[/.]/g, '\\$&')}: \\S`));
  assert.match(text, /Owner\s+container runtime/);
  assert.equal(await image.getAttribute('aria-current'), 'step');
  const all = await links(page);
  assert.deepEqual(all.slice(0, 3), ['stored:ok', 'scheduled:ok', 'node:ok'], all.join(' '));
  assert.deepEqual(all.slice(all.indexOf('image:broken') + 1), ['started:unreached', 'ready:unreached', 'endpoints:unreached', 'kube-proxy:unreached']);
  assert.match(await page.locator('.chain-summary').innerText(), /^Broken at image/);
  assert.deepEqual(pageErrors, []);
});

test('a healthy Deployment behind a Service: every link ok, kube-proxy shown as not visible from the API; scaling shows live', async (t) => {
  t.after(() => screenshot(page, 'chain-scaled'));
  kubectlOk(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=120s'], { timeoutMs: 130_000 });
  await page.goto('about:blank');   // a fresh load: the login fragment is read at start-up
  await page.goto(loginUrl(['deployment/web', '-n', ns]));
  const chain = page.locator('[data-testid=chain][data-verdict=ok]');
  await chain.waitFor({ timeout: 60_000 });
  const steps = await links(page);
  assert.deepEqual(steps, ['stored:ok', 'replicaset:ok', 'pods:ok', 'scheduled:ok', 'node:ok', 'image:ok', 'started:ok', 'ready:ok', 'endpoints:ok', 'kube-proxy:info']);
  assert.match(await page.locator('li[data-step=kube-proxy]').innerText(), /not visible from the API/);
  assert.equal(await page.locator('li.first-broken').count(), 0);
  await screenshot(page, 'chain-healthy-deployment');

  // Scale to 2: the pods link follows without a reload.
  const gathers = Number(await page.locator('[data-testid=chain]').getAttribute('data-gathers'));
  kubectlOk(['-n', ns, 'scale', 'deployment/web', '--replicas=2']);
  await page.locator('li[data-step=pods]', { hasText: '2/2 pods' }).waitFor({ timeout: 60_000 });
  await waitFor(async () => (await page.locator('[data-testid=chain]').getAttribute('data-verdict')) === 'ok', { timeoutMs: 90_000, what: 'both pods ready in the chain' });
  assert.ok(Number(await page.locator('[data-testid=chain]').getAttribute('data-gathers')) > gathers, 're-gathered in place');
  assert.deepEqual(pageErrors, []);
});
