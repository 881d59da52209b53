/**
 * Admission webhooks on the real cluster (issue 19): a small HTTPS server started by the test (a CA
 * and serving certificate made here, caBundle in the configuration) behind a
 * ValidatingWebhookConfiguration that denies a ConfigMap with a message kubectl prints, and a
 * MutatingWebhookConfiguration that adds a label. Only the test's namespace is matched.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCa, issueCertificate } from '@mk8s/component-base/pki';
import { kubectl, kubectlAsync, kubectlAsyncOk, kubectlOk, uniqueName } from './lib/cluster.js';

const ns = uniqueName('e2e-webhooks');
let dir = '';
let server: Server | undefined;
let url = '';
let caBundle = '';

describe('admission webhooks', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mk8s-e2e-webhook-'));
    const ca = await ensureCa({ cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') });
    const cert = await issueCertificate(ca, { commonName: 'e2e-webhook', usage: 'server', ips: ['127.0.0.1'] });
    caBundle = Buffer.from(ca.certPem).toString('base64');
    server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => { body += d.toString(); });
      req.on('end', () => {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const review = JSON.parse(body) as { request: { uid: string; object: any } };
        const { uid, object } = review.request;
        let response: Record<string, unknown> = { uid, allowed: true };
        // The apiserver adds ?timeout=<timeoutSeconds>s to the URL, as upstream's: route on the path.
        const path = new URL(req.url ?? '/', 'https://webhook').pathname;
        if (path === '/validate' && object?.data?.forbidden !== undefined) response = { uid, allowed: false, status: { code: 403, message: 'ConfigMaps may not carry a "forbidden" key' } };
        if (path === '/mutate') {
          const patch = object.metadata.labels ? [{ op: 'add', path: '/metadata/labels/webhook', value: 'mutated' }] : [{ op: 'add', path: '/metadata/labels', value: { webhook: 'mutated' } }];
          response = { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
        }
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
    kubectlOk(['create', 'namespace', ns]);
    kubectlOk(['label', 'namespace', ns, 'webhooks=e2e']);
    const hook = (name: string, path: string) => `
  - name: ${name}
    clientConfig: { url: "${url}${path}", caBundle: "${caBundle}" }
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    namespaceSelector: { matchLabels: { webhooks: e2e } }
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 5`;
    kubectlOk(['apply', '-f', '-'], { input: `apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: { name: ${ns}-validate }\nwebhooks:${hook('deny.e2e.example.com', '/validate')}\n` });
    kubectlOk(['apply', '-f', '-'], { input: `apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: { name: ${ns}-mutate }\nwebhooks:${hook('label.e2e.example.com', '/mutate')}\n` });
  });
  after(async () => {
    kubectl(['delete', 'validatingwebhookconfiguration', `${ns}-validate`, '--ignore-not-found']);
    kubectl(['delete', 'mutatingwebhookconfiguration', `${ns}-mutate`, '--ignore-not-found']);
    kubectl(['delete', 'namespace', ns, '--wait=false']);
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    rmSync(dir, { recursive: true, force: true });
  });

  // kubectl runs asynchronously while the webhook server (in this process) must answer.
  test('the validating webhook denies with a message kubectl prints', async () => {
    const r = await kubectlAsync(['-n', ns, 'create', 'configmap', 'nope', '--from-literal=forbidden=1']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /admission webhook "deny\.e2e\.example\.com" denied the request: ConfigMaps may not carry a "forbidden" key/);
  });

  test('the mutating webhook adds a label', async () => {
    await kubectlAsyncOk(['-n', ns, 'create', 'configmap', 'fine', '--from-literal=a=1']);
    assert.equal(await kubectlAsyncOk(['-n', ns, 'get', 'configmap', 'fine', '-o', 'jsonpath={.metadata.labels.webhook}']), 'mutated');
  });

  test('other namespaces are not sent to the webhooks', async () => {
    const other = `${ns}-other`;
    await kubectlAsyncOk(['create', 'namespace', other]);
    try {
      await kubectlAsyncOk(['-n', other, 'create', 'configmap', 'free', '--from-literal=forbidden=1']);
      assert.equal(await kubectlAsyncOk(['-n', other, 'get', 'configmap', 'free', '-o', 'jsonpath={.metadata.labels}']), '');
    } finally {
      kubectl(['delete', 'namespace', other, '--wait=false']);
    }
  });
});
