/**
 * The web dashboard in a real browser (issue 22), on the cluster `mkctl cluster up` started:
 * log in through the URL `mkctl dashboard --url` prints; the node list; a new Deployment's pods
 * appear without a reload, its YAML is edited through a dry-run diff and server-side apply,
 * its logs stream, scaling to 0 removes the pods; a token without rights sees Forbidden; no
 * token gets 401. Each test saves a screenshot under .mk8s/artifacts/dashboard/.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';
import { DASHBOARD, dashboardRequest, launchBrowser, loginUrl, newPage, screenshot } from './lib/browser.js';

const ns = uniqueName('e2e-dashboard');
const deploy = 'ticker';
const MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${deploy}, namespace: ${ns} }
spec:
  replicas: 2
  selector: { matchLabels: { app: ${deploy} } }
  template:
    metadata: { labels: { app: ${deploy} } }
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: tick
          image: busybox
          imagePullPolicy: IfNotPresent
          command: [sh, -c, 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 1; done']
`;

const podRows = (page: Page) => page.locator(`[data-testid=pods] tr[data-namespace="${ns}"]`);

describe('dashboard', () => {
  let browser: Browser;
  let page: Page;
  let errors: string[];
  before(async () => {
    kubectlOk(['create', 'namespace', ns]);
    browser = await launchBrowser();
    ({ page, errors } = await newPage(browser));
  });
  after(async () => {
    await browser?.close();
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  test('serves HTTPS with a certificate of the cluster CA; no token → 401; anti-framing headers', async () => {
    const res = await dashboardRequest('/api/v1/namespaces');
    assert.equal(res.status, 401);
    assert.equal(JSON.parse(res.body).reason, 'Unauthorized');
    const index = await dashboardRequest('/');
    assert.equal(index.status, 200);
    assert.equal(index.headers['x-frame-options'], 'DENY');
    assert.match(String(index.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(index.headers['referrer-policy'], 'no-referrer');
  });

  test('logs in through the printed URL and lists every node', async (t) => {
    t.after(async () => { await screenshot(page, 'login-nodes'); });
    const url = loginUrl();
    assert.ok(url.startsWith(`${DASHBOARD}/#token=`), url);
    await page.goto(url);
    await page.waitForSelector('[data-testid=nodes]');
    assert.ok(!page.url().includes('token'), `the token left the address bar: ${page.url()}`);
    const nodes = kubectlOk(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}']).trim().split(/\s+/);
    for (const n of nodes) {
      const row = page.locator(`[data-testid=nodes] tr[data-name="${n}"]`);
      await row.waitFor();
      assert.match(await row.locator('[data-col=status]').innerText(), /Ready/);
      assert.match(await row.locator('[data-col=lease]').innerText(), /renewed/);
    }
    assert.deepEqual(errors, []);
  });

  test("a new Deployment's pods appear without a reload; edit applies through a dry-run diff", async (t) => {
    t.after(async () => { await screenshot(page, 'deployment-pods'); });
    await page.goto(`${DASHBOARD}/#/pods`);
    await page.locator('[data-testid=pods]').waitFor();
    const loads: string[] = [];
    page.on('load', () => loads.push(page.url()));
    kubectlOk(['apply', '-f', '-'], { input: MANIFEST });
    await waitFor(async () => (await podRows(page).count()) === 2, { timeoutMs: 60_000, what: 'two pod rows' });
    await waitFor(async () => (await podRows(page).locator('[data-col=status]').allInnerTexts()).every((s) => s === 'Running'), { timeoutMs: 90_000, what: 'both pods Running on the page' });
    assert.deepEqual(loads, [], 'no reload');

    // YAML → edit → dry-run diff → server-side apply.
    await page.goto(`${DASHBOARD}/#/object/apps/v1/deployments/${ns}/${deploy}`);
    await page.locator('[data-testid=edit]').click();
    const editor = page.locator('[data-testid=yaml-editor]');
    await editor.fill((await editor.inputValue()).replace(/^(\s*)replicas: 2$/m, '$1replicas: 3'));
    await page.locator('[data-testid=review]').click();
    const diff = await page.locator('[data-testid=diff]').innerText();
    assert.match(diff, /^- +replicas: 2$/m);
    assert.match(diff, /^\+ +replicas: 3$/m);
    assert.equal(kubectlOk(['-n', ns, 'get', 'deploy', deploy, '-o', 'jsonpath={.spec.replicas}']), '2', 'the dry run changed nothing');
    await page.locator('[data-testid=apply]').click();
    await page.locator('[data-testid=applied]').waitFor();
    assert.equal(kubectlOk(['-n', ns, 'get', 'deploy', deploy, '-o', 'jsonpath={.spec.replicas}']), '3');
    assert.match(kubectlOk(['-n', ns, 'get', 'deploy', deploy, '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}']), /mk8s-dashboard/);

    // mkctl dashboard --url KIND/NAME -n NS opens the object's chain view.
    await page.goto(loginUrl(['deploy/' + deploy, '-n', ns]));
    await waitFor(() => page.url().endsWith(`#/chain/Deployment/${ns}/${deploy}`), { what: `the chain route, at ${page.url()}` });
  });

  test('logs stream as the container writes', async (t) => {
    t.after(async () => { await screenshot(page, 'logs'); });
    const pod = await waitFor(() => kubectlOk(['-n', ns, 'get', 'pods', '-l', `app=${deploy}`, '--field-selector=status.phase=Running', '-o', 'jsonpath={.items[0].metadata.name}']).trim(), { timeoutMs: 60_000, what: 'a Running pod' });
    await page.goto(`${DASHBOARD}/#/logs/${ns}/${pod}`);
    const log = page.locator('[data-testid=log]');
    const firstTick = await waitFor(async () => Number([...(await log.innerText()).matchAll(/tick (\d+)/g)].pop()?.[1] ?? NaN) + 1, { timeoutMs: 30_000, what: 'a first log line' });
    // Later lines arrive on the open stream, without a new request from the test.
    await waitFor(async () => (await log.innerText()).includes(`tick ${firstTick + 2}`), { timeoutMs: 30_000, what: `tick ${firstTick + 2}` });
    assert.equal(await page.locator('[data-testid=log-state]').innerText(), 'following');
  });

  test('scaling to 0 removes the pods from the page', async (t) => {
    t.after(async () => { await screenshot(page, 'scaled-to-zero'); });
    await page.goto(`${DASHBOARD}/#/pods`);
    await waitFor(async () => (await podRows(page).count()) >= 2, { timeoutMs: 60_000, what: 'pod rows' });
    kubectlOk(['-n', ns, 'scale', 'deployment', deploy, '--replicas=0']);
    await waitFor(async () => (await podRows(page).count()) === 0, { timeoutMs: 60_000, what: 'no pod rows' });
  });

  test('a token without rights sees Forbidden', async (t) => {
    kubectlOk(['-n', ns, 'create', 'serviceaccount', 'nobody']);
    const token = kubectlOk(['-n', ns, 'create', 'token', 'nobody', '--duration=10m']).trim();
    const other = await newPage(browser);
    t.after(async () => { await screenshot(other.page, 'forbidden'); await other.context.close(); });
    await other.page.goto(`${DASHBOARD}/#token=${encodeURIComponent(token)}&next=%2Fcluster`);
    const problem = other.page.locator('.problem[data-code="403"]').first();
    await problem.waitFor();
    assert.match(await problem.innerText(), /^Forbidden/);
    assert.match(await problem.innerText(), /forbidden/i);
    await other.page.goto(`${DASHBOARD}/#/pods`);
    await other.page.locator('.problem[data-code="403"]').first().waitFor();
  });
});
