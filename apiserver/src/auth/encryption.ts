/**
 * Encryption at rest (apiserver storage/value/encrypt/aes + the EncryptionConfiguration file of
 * --encryption-provider-config). A Storage wrapper for the configured resources' key prefixes:
 * everything but apiVersion/kind/metadata is sealed with AES-256-GCM into one field
 * `k8s:enc` = `k8s:enc:aesgcm:v1:<keyname>:<base64(nonce|ciphertext|tag)>`. metadata stays clear
 * because the stores below read uid/resourceVersion for preconditions; the Secret's data, type
 * and stringData never reach etcd in plaintext. The API sees plain objects (transparent).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { ApiError, type KubeObject } from '@mk8s/api';
import type { Storage, StorageEvent, StorageList, StorageListOptions, StorageWatchOptions, Preconditions } from '../storage/interfaces.js';

export const ENCRYPTED_FIELD = 'k8s:enc';
const AESGCM_PREFIX = 'k8s:enc:aesgcm:v1:';

/** One provider of a resource's list: the first writes, all may read. */
export type EncryptionProvider = { kind: 'aesgcm'; keys: { name: string; secret: Buffer }[] } | { kind: 'identity' };

export interface EncryptionConfig {
  /** etcd key prefix (e.g. /registry/secrets/) → providers in order. */
  prefixes: Map<string, EncryptionProvider[]>;
}

/** Parses an apiserver.config.k8s.io/v1 EncryptionConfiguration (YAML or JSON). Throws on errors, as upstream refuses to start. */
export function parseEncryptionConfig(text: string): EncryptionConfig {
  const doc = yaml.load(text) as { kind?: string; resources?: { resources?: string[]; providers?: Record<string, { keys?: { name?: string; secret?: string }[] }>[] }[] };
  if (!doc || doc.kind !== 'EncryptionConfiguration') throw new Error('encryption provider config: kind must be EncryptionConfiguration');
  const prefixes = new Map<string, EncryptionProvider[]>();
  for (const r of doc.resources ?? []) {
    const providers: EncryptionProvider[] = [];
    for (const p of r.providers ?? []) {
      const [kind, body] = Object.entries(p)[0] ?? [];
      if (kind === 'identity') providers.push({ kind: 'identity' });
      else if (kind === 'aesgcm') {
        const keys = (body?.keys ?? []).map((k) => {
          const secret = Buffer.from(k.secret ?? '', 'base64');
          if (!k.name || ![16, 24, 32].includes(secret.length)) throw new Error(`encryption provider config: aesgcm key "${k.name ?? ''}" must be 16, 24 or 32 bytes (base64)`);
          return { name: k.name, secret };
        });
        if (keys.length === 0) throw new Error('encryption provider config: aesgcm needs at least one key');
        providers.push({ kind: 'aesgcm', keys });
      } else throw new Error(`encryption provider config: unsupported provider "${String(kind)}" (aesgcm, identity)`);
    }
    if (providers.length === 0) throw new Error('encryption provider config: a resource needs at least one provider');
    for (const res of r.resources ?? []) {
      const [resource, group] = res.split(/\.(.*)/s) as [string, string | undefined];
      prefixes.set(group ? `/registry/${group}/${resource}/` : `/registry/${resource}/`, providers);
    }
  }
  return { prefixes };
}

export function loadEncryptionConfig(path: string): EncryptionConfig { return parseEncryptionConfig(readFileSync(path, 'utf8')); }

const aesAlg = (key: Buffer) => (`aes-${key.length * 8}-gcm` as 'aes-256-gcm');

/** Seals the non-metadata fields of obj with the first provider (identity: unchanged). */
export function sealObject(obj: KubeObject, providers: readonly EncryptionProvider[], key: string): KubeObject {
  const p = providers[0];
  if (!p || p.kind === 'identity') return obj;
  const k = p.keys[0]!;
  const { apiVersion, kind, metadata, ...rest } = obj;
  const nonce = randomBytes(12);
  const c = createCipheriv(aesAlg(k.secret), k.secret, nonce);
  // The key is authenticated data: a ciphertext copied to another key does not decrypt (upstream does the same).
  c.setAAD(Buffer.from(key));
  const ct = Buffer.concat([c.update(JSON.stringify(rest), 'utf8'), c.final(), c.getAuthTag()]);
  return { apiVersion, kind, metadata, [ENCRYPTED_FIELD]: `${AESGCM_PREFIX}${k.name}:${Buffer.concat([nonce, ct]).toString('base64')}` } as KubeObject;
}

/** Opens a sealed object with any configured key; plaintext objects pass through (identity, or written before encryption). */
export function openObject(obj: KubeObject, providers: readonly EncryptionProvider[], key: string): KubeObject {
  const sealed = obj[ENCRYPTED_FIELD];
  if (typeof sealed !== 'string') return obj;
  if (!sealed.startsWith(AESGCM_PREFIX)) throw new ApiError('InternalError', `Internal error occurred: no provider for the stored value of ${key}`);
  const rest = sealed.slice(AESGCM_PREFIX.length);
  const colon = rest.indexOf(':');
  const name = rest.slice(0, colon);
  const data = Buffer.from(rest.slice(colon + 1), 'base64');
  for (const p of providers) {
    if (p.kind !== 'aesgcm') continue;
    for (const k of p.keys) {
      if (k.name !== name) continue;
      try {
        const d = createDecipheriv(aesAlg(k.secret), k.secret, data.subarray(0, 12));
        d.setAAD(Buffer.from(key));
        d.setAuthTag(data.subarray(data.length - 16));
        const plain = Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]).toString('utf8');
        const { [ENCRYPTED_FIELD]: _e, ...clear } = obj;
        return { ...clear, ...(JSON.parse(plain) as Record<string, unknown>) } as KubeObject;
      } catch { /* try the next key of that name */ }
    }
  }
  throw new ApiError('InternalError', `Internal error occurred: unable to decrypt the stored value of ${key}`);
}

/** Wraps a Storage so that objects under the configured prefixes are encrypted at rest. */
export class EncryptingStorage implements Storage {
  constructor(private readonly inner: Storage, private readonly cfg: EncryptionConfig) {}

  private providersFor(key: string): EncryptionProvider[] | undefined {
    for (const [prefix, p] of this.cfg.prefixes) if (key.startsWith(prefix)) return p;
    return undefined;
  }
  private open(key: string, o: KubeObject): KubeObject { const p = this.providersFor(key); return p ? openObject(o, p, key) : o; }
  private keyOf(prefix: string, o: KubeObject): string {
    // list/watch items carry no key; rebuild it as the registry does (<resource prefix><ns>/<name> or
    // <resource prefix><name>) from the configured resource prefix: a namespace's list prefix already ends in <ns>/.
    let base = prefix;
    for (const [p] of this.cfg.prefixes) if (prefix.startsWith(p)) { base = p; break; }
    const ns = o.metadata.namespace;
    return ns ? `${base}${ns}/${o.metadata.name}` : `${base}${o.metadata.name}`;
  }

  async create(key: string, obj: KubeObject): Promise<KubeObject> {
    const p = this.providersFor(key);
    if (!p) return this.inner.create(key, obj);
    return openObject(await this.inner.create(key, sealObject(obj, p, key)), p, key);
  }
  async get(key: string): Promise<KubeObject> { return this.open(key, await this.inner.get(key)); }
  async list(prefix: string, opts: StorageListOptions = {}): Promise<StorageList> {
    if (!this.providersFor(prefix)) return this.inner.list(prefix, opts);
    const pred = opts.predicate;
    const open = (o: KubeObject) => this.open(this.keyOf(prefix, o), o);
    const res = await this.inner.list(prefix, { ...opts, ...(pred ? { predicate: (o: KubeObject) => pred(open(o)) } : {}) });
    return { ...res, items: res.items.map(open) };
  }
  async guaranteedUpdate(key: string, tryUpdate: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>,
    opts?: { preconditions?: Preconditions; ignoreNotFound?: boolean }): Promise<KubeObject> {
    const p = this.providersFor(key);
    if (!p) return this.inner.guaranteedUpdate(key, tryUpdate, opts);
    const out = await this.inner.guaranteedUpdate(key, async (cur) => {
      const plainCur = cur ? openObject(cur, p, key) : undefined;
      const next = await tryUpdate(plainCur);
      // Unchanged: hand back the stored bytes so the store sees no change (a fresh nonce would always differ).
      if (cur && plainCur && sameContent(next, plainCur)) return cur;
      return sealObject(next, p, key);
    }, opts);
    return openObject(out, p, key);
  }
  async delete(key: string, opts?: { preconditions?: Preconditions; validateDeletion?: (current: KubeObject) => void | Promise<void> }): Promise<KubeObject> {
    const p = this.providersFor(key);
    if (!p) return this.inner.delete(key, opts);
    const v = opts?.validateDeletion;
    const out = await this.inner.delete(key, { ...(opts ?? {}), ...(v ? { validateDeletion: (c: KubeObject) => v(openObject(c, p, key)) } : {}) });
    return openObject(out, p, key);
  }
  async *watch(prefix: string, opts: StorageWatchOptions): AsyncIterable<StorageEvent> {
    if (!this.providersFor(prefix)) { yield* this.inner.watch(prefix, opts); return; }
    const pred = opts.predicate;
    const open = (o: KubeObject, k?: string) => this.open(k ?? this.keyOf(prefix, o), o);
    for await (const ev of this.inner.watch(prefix, { ...opts, ...(pred ? { predicate: (o: KubeObject) => pred(open(o)) } : {}) })) {
      yield { ...ev, object: open(ev.object, ev.key), ...(ev.prevObject ? { prevObject: open(ev.prevObject, ev.key) } : {}) };
    }
  }
  currentResourceVersion(): Promise<string> { return this.inner.currentResourceVersion(); }
  requestWatchProgress(): void { this.inner.requestWatchProgress?.(); }
  close(): Promise<void> { return this.inner.close(); }
}

function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return strip(a) === strip(b);
}
