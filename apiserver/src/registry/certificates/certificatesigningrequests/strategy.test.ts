import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@mk8s/api';
import { csrStrategy } from './strategy.js';
import { validateCsrCreate, validateCsrUpdate, validateSignerName, type Csr } from './validation.js';
import { csrCondition } from '../../../printers/admin-printers.js';

const dir = mkdtempSync(join(tmpdir(), 'csr-unit-'));
execFileSync('openssl', ['ecparam', '-genkey', '-name', 'prime256v1', '-noout', '-out', join(dir, 'k')]);
execFileSync('openssl', ['req', '-new', '-key', join(dir, 'k'), '-out', join(dir, 'r'), '-subj', '/CN=alice']);
const REQUEST = readFileSync(join(dir, 'r')).toString('base64');
rmSync(dir, { recursive: true, force: true });

const csr = (over: Partial<NonNullable<Csr['spec']>> = {}, status?: Csr['status']): Csr => ({
  metadata: { name: 'c' },
  spec: { request: REQUEST, signerName: 'example.com/s', usages: ['client auth'], ...over },
  ...(status ? { status } : {}),
});
const fields = (errs: { message: string }[]) => errs.map((e) => e.message);

test('validateCsrCreate accepts a well-formed request', () => {
  assert.deepEqual(validateCsrCreate(csr()), []);
});

test('validateCsrCreate rejects as upstream', () => {
  const cases: { name: string; c: Csr; want: RegExp }[] = [
    { name: 'request not PEM', c: csr({ request: Buffer.from('xy').toString('base64') }), want: /^spec\.request: Invalid value: \[\]byte\{0x78, 0x79\}: PEM block type must be CERTIFICATE REQUEST$/ },
    { name: 'no usages', c: csr({ usages: [] }), want: /^spec\.usages: Required value$/ },
    { name: 'unknown usage', c: csr({ usages: ['nope'] }), want: /^spec\.usages\[0\]: Unsupported value: "nope": supported values: "any", "cert sign"/ },
    { name: 'duplicate usage', c: csr({ usages: ['client auth', 'client auth'] }), want: /^spec\.usages\[1\]: Duplicate value: "client auth"$/ },
    { name: 'no signer', c: csr({ signerName: '' }), want: /^spec\.signerName: Required value$/ },
    { name: 'legacy signer', c: csr({ signerName: 'kubernetes.io/legacy-unknown' }), want: /the legacy signerName is not allowed via this API version/ },
    { name: 'short expiration', c: csr({ expirationSeconds: 599 }), want: /^spec\.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds \(10 minutes\)$/ },
    { name: 'approved and denied', c: csr({}, { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'True' }] }), want: /^status\.conditions\[1\]\.type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive$/ },
    { name: 'Failed False', c: csr({}, { conditions: [{ type: 'Failed', status: 'False' }] }), want: /^status\.conditions\[0\]\.status: Unsupported value: "False": supported values: "True"$/ },
    { name: 'bad certificate', c: csr({}, { certificate: Buffer.from('junk').toString('base64') }), want: /^status\.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block$/ },
  ];
  for (const c of cases) assert.ok(fields(validateCsrCreate(c.c)).some((m) => c.want.test(m)), `${c.name}: ${fields(validateCsrCreate(c.c)).join(' | ')}`);
});

test('validateSignerName', () => {
  assert.deepEqual(validateSignerName('p', 'kubernetes.io/kube-apiserver-client'), []);
  assert.match(fields(validateSignerName('p', 'a/b/c'))[0]!, /must be a fully qualified domain and path/);
  assert.match(fields(validateSignerName('p', 'local/x'))[0]!, /should be a domain with at least two segments separated by dots/);
  assert.match(fields(validateSignerName('p', 'Ex.com/x'))[0]!, /validating label "Ex"/);
});

test('validateCsrUpdate: who may change conditions and the certificate', () => {
  const approved = csr({}, { conditions: [{ type: 'Approved', status: 'True' }] });
  const pending = csr();
  assert.match(fields(validateCsrUpdate(approved, pending, 'status'))[0]!, /updates may not add a condition of type "Approved"/);
  assert.deepEqual(validateCsrUpdate(approved, pending, 'approval'), []);
  assert.match(fields(validateCsrUpdate(pending, approved, 'approval'))[0]!, /updates may not remove a condition of type "Approved"/);
  const cert = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');
  const issued = csr({}, { conditions: [{ type: 'Approved', status: 'True' }], certificate: cert });
  assert.ok(fields(validateCsrUpdate(issued, approved, 'approval')).some((m) => /updates may not set certificate content/.test(m)));
});

test('strategy: the requestor comes from the request; status is cleared on create', () => {
  const obj = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', ...csr({ username: 'mallory', groups: ['system:masters'] }, { conditions: [{ type: 'Approved', status: 'True' }] }) } as unknown as KubeObject;
  csrStrategy.prepareForCreate!(obj, { now: new Date(0), user: { username: 'alice', uid: 'u1', groups: ['dev'], extra: { scopes: ['a'] } } });
  assert.deepEqual((obj as unknown as Csr).spec, { request: REQUEST, signerName: 'example.com/s', usages: ['client auth'], username: 'alice', uid: 'u1', groups: ['dev'], extra: { scopes: ['a'] } });
  assert.equal(obj['status'], undefined);
});

test('strategy: /status keeps stored Approved/Denied; /approval changes only conditions; timestamps filled', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const ctx = { now, user: { username: 'x', groups: [] } };
  const prev = { ...csr({}, { conditions: [{ type: 'Approved', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z', lastUpdateTime: '2025-01-01T00:00:00Z' }] }) } as unknown as KubeObject;
  const viaStatus = structuredClone(prev);
  (viaStatus as unknown as Csr).status = { conditions: [{ type: 'Failed', status: 'True' }], certificate: 'Y2VydA==' };
  (viaStatus as unknown as Csr).spec!.signerName = 'changed.io/x';
  csrStrategy.prepareForStatusUpdate!(viaStatus, prev, ctx);
  const s = (viaStatus as unknown as Csr);
  assert.equal(s.spec!.signerName, 'example.com/s');
  assert.deepEqual(s.status!.conditions!.map((c) => c.type), ['Failed', 'Approved']);
  assert.equal(s.status!.conditions![0]!.lastUpdateTime, '2026-01-01T00:00:00Z');
  assert.equal(s.status!.certificate, 'Y2VydA==');
  const viaApproval = structuredClone(prev);
  (viaApproval as unknown as Csr).status = { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'Y2VydA==' };
  csrStrategy.prepareForApprovalUpdate!(viaApproval, prev, ctx);
  const a = viaApproval as unknown as Csr;
  assert.equal(a.status!.certificate, undefined);
  assert.equal(a.status!.conditions![0]!.lastTransitionTime, '2025-01-01T00:00:00Z'); // same type and status: kept
  assert.equal(a.status!.conditions![0]!.lastUpdateTime, '2026-01-01T00:00:00Z');
});

test('csrCondition prints extractCSRStatus', () => {
  assert.equal(csrCondition({}), 'Pending');
  assert.equal(csrCondition({ status: { conditions: [{ type: 'Approved' }], certificate: 'x' } }), 'Approved,Issued');
  assert.equal(csrCondition({ status: { conditions: [{ type: 'Approved' }, { type: 'Denied' }, { type: 'Failed' }] } }), 'Denied,Failed');
});
