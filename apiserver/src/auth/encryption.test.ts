import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv } from 'node:crypto';
import nacl from 'tweetnacl';
import { checkEncryptionConfig, encryptionTransformer, parseEncryptionConfig, providersTransformer } from './encryption.js';

const K1 = Buffer.alloc(32, 7).toString('base64');
const K2 = Buffer.alloc(32, 9).toString('base64');
const config = (...providers: string[]) => ['apiVersion: apiserver.config.k8s.io/v1', 'kind: EncryptionConfiguration', 'resources:',
  '  - resources: [secrets, deployments.apps]', '    providers:', ...providers.map((p) => `      - ${p}`), ''].join('\n');
const gcm = (...keys: [string, string][]) => `aesgcm: {keys: [${keys.map(([n, s]) => `{name: ${n}, secret: "${s}"}`).join(', ')}]}`;
const box = (...keys: [string, string][]) => `secretbox: {keys: [${keys.map(([n, s]) => `{name: ${n}, secret: "${s}"}`).join(', ')}]}`;
const cbc = (...keys: [string, string][]) => `aescbc: {keys: [${keys.map(([n, s]) => `{name: ${n}, secret: "${s}"}`).join(', ')}]}`;

const KEY = '/registry/secrets/default/db';
const SECRET = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'default',
  annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"pw":"hunter2"}}' } }, data: { pw: 'aHVudGVyMg==' } }));

test('aesgcm seals the whole value: k8s:enc:aesgcm:v1:<key>: + nonce + ciphertext + tag, nothing readable', () => {
  const t = encryptionTransformer(parseEncryptionConfig(config(gcm(['key1', K1]), 'identity: {}')));
  const stored = t.toStorage(KEY, SECRET);
  const prefix = 'k8s:enc:aesgcm:v1:key1:';
  assert.equal(stored.subarray(0, prefix.length).toString(), prefix);
  assert.equal(stored.length, prefix.length + 12 + SECRET.length + 16);
  for (const word of ['hunter2', 'aHVudGVyMg', 'last-applied', 'Secret', '"db"', 'default']) assert.ok(!stored.includes(word), word);
  assert.deepEqual(t.fromStorage(KEY, stored), { data: SECRET, stale: false });
  // Two writes of the same value differ (random nonce).
  assert.ok(!t.toStorage(KEY, SECRET).equals(stored));
  // The etcd key is authenticated data: a value copied under another key does not open.
  assert.throws(() => t.fromStorage('/registry/secrets/default/copy', stored), (e: Error & { reason?: string }) => e.reason === 'InternalError');
  // A flipped ciphertext byte fails authentication.
  const bad = Buffer.from(stored); bad.writeUInt8(bad.readUInt8(prefix.length + 20) ^ 1, prefix.length + 20);
  assert.throws(() => t.fromStorage(KEY, bad));
});

test('aescbc: k8s:enc:aescbc:v1:<key>: + iv + PKCS#7 ciphertext, readable by the same config', () => {
  const t = providersTransformer(parseEncryptionConfig(config(cbc(['k', K2]))).prefixes.get('/registry/secrets/')!);
  const stored = t.toStorage(KEY, SECRET);
  const prefix = 'k8s:enc:aescbc:v1:k:';
  assert.equal(stored.subarray(0, prefix.length).toString(), prefix);
  assert.equal((stored.length - prefix.length - 16) % 16, 0);
  assert.ok(!stored.includes('hunter2'));
  assert.deepEqual(t.fromStorage(KEY, stored), { data: SECRET, stale: false });
  // Interoperable with any AES-CBC implementation: decrypt by hand.
  const c = createCipheriv('aes-256-cbc', Buffer.from(K2, 'base64'), Buffer.alloc(16, 1));
  const manual = Buffer.concat([Buffer.from(prefix), Buffer.alloc(16, 1), c.update(SECRET), c.final()]);
  assert.deepEqual(t.fromStorage(KEY, manual).data, SECRET);
});

test('secretbox: k8s:enc:secretbox:v1:<key>: + nonce(24) + tag(16) + ciphertext, readable by the same config', () => {
  const t = encryptionTransformer(parseEncryptionConfig(config(box(['sb', K1]), 'identity: {}')));
  const stored = t.toStorage(KEY, SECRET);
  const prefix = 'k8s:enc:secretbox:v1:sb:';
  assert.equal(stored.subarray(0, prefix.length).toString(), prefix);
  assert.equal(stored.length, prefix.length + 24 + 16 + SECRET.length);
  for (const word of ['hunter2', 'aHVudGVyMg', 'last-applied', 'Secret', '"db"', 'default']) assert.ok(!stored.includes(word), word);
  assert.deepEqual(t.fromStorage(KEY, stored), { data: SECRET, stale: false });
  assert.ok(!t.toStorage(KEY, SECRET).equals(stored));                // random nonce
  // As upstream, the etcd key is not authenticated: the value opens under another key too.
  assert.deepEqual(t.fromStorage('/registry/secrets/default/copy', stored).data, SECRET);
  // A flipped ciphertext byte or nonce byte fails Poly1305; a truncated value is refused.
  for (const at of [prefix.length + 3, prefix.length + 24 + 20]) {
    const bad = Buffer.from(stored); bad.writeUInt8(bad.readUInt8(at) ^ 1, at);
    assert.throws(() => t.fromStorage(KEY, bad), /failed authentication/);
  }
  assert.throws(() => t.fromStorage(KEY, stored.subarray(0, prefix.length + 39)), /shorter than the required size/);
  // Another secretbox key of the same name does not open it.
  const other = encryptionTransformer(parseEncryptionConfig(config(box(['sb', K2]))));
  assert.throws(() => other.fromStorage(KEY, stored), (e: Error & { reason?: string }) => e.reason === 'InternalError');
});

test('secretbox known answer: a value sealed by libsodium 1.0.18 crypto_secretbox_easy opens', () => {
  // libsodium (python3 ctypes): key = 32 × 0x07 (K1), nonce = 00 01 … 17, message below.
  const message = '{"kind":"Secret","data":{"pw":"aHVudGVyMg=="}}';
  const sealed = 'b583895fc5e6e5e5addf2c5312b0e9eee13c8226e51140ffc7c3266843b335b5d9d63696468e5e80aa2b7be5c658ab7cc86c5267d2d0d9a91f3974a327ee';
  const nonce = Buffer.from(Array.from({ length: 24 }, (_, i) => i));
  const value = Buffer.concat([Buffer.from('k8s:enc:secretbox:v1:key1:'), nonce, Buffer.from(sealed, 'hex')]);
  const t = encryptionTransformer(parseEncryptionConfig(config(box(['key1', K1]))));
  assert.deepEqual(t.fromStorage(KEY, value), { data: Buffer.from(message), stale: false });
  // And the write side: the same primitive with that nonce gives libsodium's bytes; our value is nonce + exactly that.
  assert.equal(Buffer.from(nacl.secretbox(Buffer.from(message), nonce, Buffer.from(K1, 'base64'))).toString('hex'), sealed);
  const mine = t.toStorage(KEY, Buffer.from(message));
  const body = mine.subarray('k8s:enc:secretbox:v1:key1:'.length);
  assert.deepEqual(Buffer.from(nacl.secretbox(Buffer.from(message), body.subarray(0, 24), Buffer.from(K1, 'base64'))), body.subarray(24));
});

test('plaintext from before encryption is read through identity and marked stale; without identity it fails', () => {
  const withIdentity = encryptionTransformer(parseEncryptionConfig(config(gcm(['key1', K1]), 'identity: {}')));
  assert.deepEqual(withIdentity.fromStorage(KEY, SECRET), { data: SECRET, stale: true });
  const strict = encryptionTransformer(parseEncryptionConfig(config(gcm(['key1', K1]))));
  assert.throws(() => strict.fromStorage(KEY, SECRET), /no matching prefix found/);
  // identity first (decrypting away): writes plaintext, still reads the old ciphertext (stale).
  const sealed = strict.toStorage(KEY, SECRET);
  const decrypting = encryptionTransformer(parseEncryptionConfig(config('identity: {}', gcm(['key1', K1]))));
  assert.deepEqual(decrypting.toStorage(KEY, SECRET), SECRET);
  assert.deepEqual(decrypting.fromStorage(KEY, sealed), { data: SECRET, stale: true });
  // Encrypted data with no provider for it is an error, never served as plaintext.
  const identityOnly = encryptionTransformer(parseEncryptionConfig(config('identity: {}')));
  assert.throws(() => identityOnly.fromStorage(KEY, sealed), /identity transformer tried to read encrypted data/);
});

test('key rotation: a new first key writes, the old key still reads (stale), then it may be removed', () => {
  const old = encryptionTransformer(parseEncryptionConfig(config(gcm(['key1', K1]), 'identity: {}')));
  const v1 = old.toStorage(KEY, SECRET);
  // Step 1: key2 added second (every apiserver can read it before any writes with it).
  const added = encryptionTransformer(parseEncryptionConfig(config(gcm(['key1', K1], ['key2', K2]), 'identity: {}')));
  assert.deepEqual(added.fromStorage(KEY, v1), { data: SECRET, stale: false });
  // Step 2: key2 first: it writes, key1 values are stale (rewritten by `kubectl replace`).
  const rotated = encryptionTransformer(parseEncryptionConfig(config(gcm(['key2', K2], ['key1', K1]), 'identity: {}')));
  assert.deepEqual(rotated.fromStorage(KEY, v1), { data: SECRET, stale: true });
  const v2 = rotated.toStorage(KEY, SECRET);
  assert.match(v2.subarray(0, 30).toString('latin1'), /^k8s:enc:aesgcm:v1:key2:/);
  // Step 3: key1 removed: key2 values read, key1 values no longer do.
  const only2 = encryptionTransformer(parseEncryptionConfig(config(gcm(['key2', K2]), 'identity: {}')));
  assert.deepEqual(only2.fromStorage(KEY, v2), { data: SECRET, stale: false });
  assert.throws(() => only2.fromStorage(KEY, v1));
  // Moving from aesgcm to aescbc works the same way across providers.
  const toCbc = encryptionTransformer(parseEncryptionConfig(config(cbc(['c1', K2]), gcm(['key1', K1]))));
  assert.deepEqual(toCbc.fromStorage(KEY, v1), { data: SECRET, stale: true });
});

test('key rotation across secretbox and aesgcm, both ways', () => {
  const gcmOnly = encryptionTransformer(parseEncryptionConfig(config(gcm(['g', K1]), 'identity: {}')));
  const boxOnly = encryptionTransformer(parseEncryptionConfig(config(box(['b', K2]), 'identity: {}')));
  const vGcm = gcmOnly.toStorage(KEY, SECRET);
  const vBox = boxOnly.toStorage(KEY, SECRET);
  // aesgcm → secretbox: secretbox first writes, aesgcm values still read (stale, rewritten on update).
  const toBox = encryptionTransformer(parseEncryptionConfig(config(box(['b', K2]), gcm(['g', K1]), 'identity: {}')));
  assert.match(toBox.toStorage(KEY, SECRET).subarray(0, 24).toString('latin1'), /^k8s:enc:secretbox:v1:b:/);
  assert.deepEqual(toBox.fromStorage(KEY, vGcm), { data: SECRET, stale: true });
  assert.deepEqual(toBox.fromStorage(KEY, vBox), { data: SECRET, stale: false });
  assert.deepEqual(toBox.fromStorage(KEY, SECRET), { data: SECRET, stale: true });
  // secretbox → aesgcm: the reverse.
  const toGcm = encryptionTransformer(parseEncryptionConfig(config(gcm(['g', K1]), box(['b', K2]))));
  assert.match(toGcm.toStorage(KEY, SECRET).subarray(0, 21).toString('latin1'), /^k8s:enc:aesgcm:v1:g:/);
  assert.deepEqual(toGcm.fromStorage(KEY, vBox), { data: SECRET, stale: true });
  assert.deepEqual(toGcm.fromStorage(KEY, vGcm), { data: SECRET, stale: false });
  // With secretbox removed, its values no longer read.
  assert.throws(() => gcmOnly.fromStorage(KEY, vBox), /identity transformer tried to read encrypted data/);
  // Two secretbox keys: the second still reads after rotation.
  const rotated = encryptionTransformer(parseEncryptionConfig(config(box(['b2', K1], ['b', K2]))));
  assert.deepEqual(rotated.fromStorage(KEY, vBox), { data: SECRET, stale: true });
});

test('resources not listed pass through; grouped resources use /registry/<group>/<resource>/', () => {
  const t = encryptionTransformer(parseEncryptionConfig(config(gcm(['key1', K1]))));
  const cm = Buffer.from('{"kind":"ConfigMap"}');
  assert.equal(t.toStorage('/registry/configmaps/default/c', cm), cm);
  assert.deepEqual(t.fromStorage('/registry/configmaps/default/c', cm), { data: cm, stale: false });
  assert.match(t.toStorage('/registry/apps/deployments/default/web', cm).toString('latin1'), /^k8s:enc:aesgcm:v1:key1:/);
  // A namespace named like the resource does not match another resource's prefix.
  assert.equal(t.toStorage('/registry/secretsx/default/c', cm), cm);
});

test("mk8s' earlier field-level format is still read (stale) with the aesgcm keys", () => {
  // {"apiVersion","kind","metadata", "k8s:enc": "k8s:enc:aesgcm:v1:key1:" + base64(nonce|ct|tag)}, the key as AAD.
  const nonce = Buffer.alloc(12, 5);
  const c = createCipheriv('aes-256-gcm', Buffer.from(K1, 'base64'), nonce);
  c.setAAD(Buffer.from(KEY));
  const ct = Buffer.concat([c.update(JSON.stringify({ data: { pw: 'aHVudGVyMg==' }, type: 'Opaque' })), c.final(), c.getAuthTag()]);
  const legacy = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'default' },
    'k8s:enc': `k8s:enc:aesgcm:v1:key1:${Buffer.concat([nonce, ct]).toString('base64')}` }));
  const t = encryptionTransformer(parseEncryptionConfig(config(gcm(['key1', K1]), 'identity: {}')));
  const r = t.fromStorage(KEY, legacy);
  assert.equal(r.stale, true);
  assert.deepEqual(JSON.parse(r.data.toString()), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'default' }, data: { pw: 'aHVudGVyMg==' }, type: 'Opaque' });
});

test('encryption config errors are refused at startup', () => {
  const bad = [
    'kind: Other',
    config(gcm(['k', 'c2hvcnQ='])),                                   // 5-byte key
    config('kms: {}'),
    config(box(['k', Buffer.alloc(16, 1).toString('base64')])),       // secretbox needs exactly 32 bytes
    config(box(['k', Buffer.alloc(24, 1).toString('base64')])),
    config(box(['k', Buffer.alloc(33, 1).toString('base64')])),
    config('secretbox: {keys: []}'),
    config(box(['k', K1], ['k', K2])),
    config(box(['a:b', K1])),
    config(gcm(['k', K1], ['k', K2])),                                 // duplicate key name
    config('aesgcm: {keys: []}'),
    ['kind: EncryptionConfiguration', 'resources:', '  - resources: ["*.*"]', '    providers: [{identity: {}}]'].join('\n'),
  ];
  for (const text of bad) assert.throws(() => parseEncryptionConfig(text), Error, text);
  assert.throws(() => parseEncryptionConfig(config(box(['k', Buffer.alloc(16, 1).toString('base64')]))), /secretbox key "k" must be 32 bytes \(base64\), got 16/);
  assert.throws(() => parseEncryptionConfig(config(gcm(['k', 'c2hvcnQ=']))), /aesgcm key "k" must be 16, 24 or 32 bytes \(base64\), got 5/);
  // 16- and 24-byte keys stay valid for AES; 32 bytes for secretbox.
  assert.doesNotThrow(() => parseEncryptionConfig(config(gcm(['k', Buffer.alloc(16, 1).toString('base64')]), cbc(['c', Buffer.alloc(24, 1).toString('base64')]), box(['b', K1]))));
});

test('the encryption-providers health check round-trips every key', () => {
  const cfg = parseEncryptionConfig(config(gcm(['key1', K1], ['key2', K2]), cbc(['c', K2]), box(['b', K1]), 'identity: {}'));
  assert.doesNotThrow(() => checkEncryptionConfig(cfg));
  assert.deepEqual(cfg.resources, ['secrets', 'deployments.apps']);
});
