/**
 * The dashboard's chain view in a real browser (issue 22): a Deployment whose image does not exist
 * shows its chain broken at "image", first broken link marked, with the kubelet's pull error as
 * evidence; a healthy Deployment with a Service is all ok through endpoints and kube-proxy (its
 * KUBE-SVC rules on each node, read by the dashboard server), and scaling it shows live on the
 * open page. The chain is the one `mkctl trace` prints (one library).
 * Screenshots under .mk8s/artifacts/dashboard/.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';
import { launchBrowser, loginUrl, newPage, screenshot } from './lib/browser.js';

const ns = uniqueName('e2e-chain');
const deployment = (name: string, image: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: ${ns} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers:
        - name: main
          image: ${image}
          imagePullPolicy: IfNotPresent
          command: [sleep, '100000']
`;
const service = `apiVersion: v1
kind: Service
metadata: { name: healthy, namespace: ${ns} }
spec:
  selector: { app: healthy }
  ports: [{ port: 80, targetPort: 8080 }]
`;

const link = (page: Page, step: string) => page.locator(`[data-testid=chain] li.chain-link[data-step="${step}"]`);
const mkctlTrace = (what: string) => spawnSync(process.execPath, [join(ROOT, 'mkctl', 'dist', 'main.js'), '--kubeconfig', KUBECONFIG, '-n', ns, 'trace', what], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, MK8S_ROOT: ROOT } });

describe('dashboard chain view', () => {
  let browser: Browser;
  let page: Page;
  let errors: string[];
  before(async () => {
    kubectlOk(['create', 'namespace', ns]);
    kubectlOk(['apply', '-f', '-'], { input: deployment('missing', 'mk8s/does-not-exist:1', 1) });
    kubectlOk(['apply', '-f', '-'], { input: `${deployment('healthy', 'busybox', 1)}---\n${service}` });
    browser = await launchBrowser();
    ({ page, errors } = await newPage(browser));
  });
  after(async () => {
    await browser?.close();
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  test('a missing image: the chain is broken at "image" with the pull error, as mkctl trace says', async (t) => {
    t.after(async () => { await screenshot(page, 'chain-missing-image'); });
    await page.goto(loginUrl(['deploy/missing', '-n', ns]));
    const chain = page.locator('[data-testid=chain]');
    await chain.waitFor();
    await waitFor(async () => (await chain.getAttribute('data-first-broken')) === 'image', { timeoutMs: 120_000, intervalMs: 1000, what: `the chain broken at image (verdict ${await chain.getAttribute('data-verdict')}, first broken ${await chain.getAttribute('data-first-broken')})` });
    assert.equal(await chain.getAttribute('data-verdict'), 'broken');
    const image = link(page, 'image');
    assert.equal(await image.getAttribute('data-status'), 'broken');
    assert.equal(await image.getAttribute('aria-current'), 'step');
    assert.match(await image.innerText(), /First broken link/);
    const evidence = await image.locator('.chain-evidence').innerText();
    assert.match(evidence, /ErrImagePull|ImagePullBackOff/);
    assert.match(evidence, /mk8s\/does-not-exist:1/);
    assert.match(await image.locator('.chain-owner').innerText(), /kubelet/);
    // The links before it are ok: stored, the ReplicaSet, the pod, scheduled.
    for (const step of ['stored', 'replicaset', 'pods', 'scheduled']) assert.equal(await link(page, step).getAttribute('data-status'), 'ok', step);
    assert.equal(await link(page, 'started').getAttribute('data-status'), 'unreached');
    // The same rules as the terminal's trace.
    const trace = mkctlTrace('deploy/missing');
    assert.match(trace.stdout, /image/);
    assert.match(trace.stdout, /ErrImagePull|ImagePullBackOff/);
    assert.deepEqual(errors, []);
  });

  test('a healthy Deployment with a Service: every link ok through kube-proxy; scaling shows live', async (t) => {
    t.after(async () => { await screenshot(page, 'chain-healthy'); });
    await page.goto(loginUrl(['deploy/healthy', '-n', ns]));
    const chain = page.locator('[data-testid=chain]');
    await chain.waitFor();
    await waitFor(async () => (await chain.getAttribute('data-verdict')) === 'ok', { timeoutMs: 120_000, intervalMs: 1000, what: 'the healthy chain ok' });
    for (const step of ['stored', 'replicaset', 'pods', 'scheduled', 'image', 'started', 'ready', 'endpoints']) {
      assert.ok(await link(page, step).count() > 0, `a ${step} link`);
      assert.deepEqual([...new Set(await link(page, step).evaluateAll((els) => els.map((e) => e.getAttribute('data-status'))))], ['ok'], step);
    }
    // kube-proxy's rules, read by the dashboard server in each node's netns for the user's token.
    assert.ok(await link(page, 'kube-proxy').count() > 0, 'a kube-proxy link');
    assert.deepEqual([...new Set(await link(page, 'kube-proxy').evaluateAll((els) => els.map((e) => e.getAttribute('data-status'))))], ['ok'], 'kube-proxy');
    assert.match(await link(page, 'kube-proxy').first().locator('.chain-evidence').innerText(), /KUBE-SVC/);
    const gathers = Number(await chain.getAttribute('data-gathers'));
    kubectlOk(['-n', ns, 'scale', 'deployment', 'healthy', '--replicas=2']);
    await waitFor(async () => /2\/2|2 of 2|2 pods/.test(await link(page, 'pods').first().innerText()) && (await chain.getAttribute('data-verdict')) === 'ok', { timeoutMs: 90_000, intervalMs: 1000, what: `two pods on the chain (pods link: ${await link(page, 'pods').first().innerText()})` });
    assert.ok(Number(await chain.getAttribute('data-gathers')) > gathers, 'updated from watches, on the same page');
    assert.deepEqual(errors, []);
  });
});
