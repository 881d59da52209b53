/**
 * Encryption at rest (upstream apiserver/pkg/server/options/encryptionconfig +
 * storage/value/encrypt/{aes,secretbox,identity}), configured by the EncryptionConfiguration file of
 * --encryption-provider-config. The whole serialized object of each listed resource is encrypted:
 * the etcd value is `k8s:enc:aesgcm:v1:<keyname>:` + nonce(12) + ciphertext + tag(16) (the etcd
 * key is GCM's additional data), or `k8s:enc:aescbc:v1:<keyname>:` + iv(16) + ciphertext
 * (PKCS#7), or `k8s:enc:secretbox:v1:<keyname>:` + nonce(24) + NaCl secretbox (XSalsa20-Poly1305:
 * tag(16) + ciphertext; 32-byte key; the etcd key is not authenticated, as upstream), so nothing of a
 * Secret (data, stringData in kubectl's last-applied annotation, labels) is readable in etcd.
 * `identity` stores plaintext.
 *
 * As upstream: the first key of the first provider writes; every provider's keys read (matched by
 * prefix, in the listed order); a value read by anything but the first one is stale and rewritten
 * on its next update (so plaintext from before encryption, listed `identity` as a read fallback,
 * is served and encrypted when next written). No matching provider: the read fails (500).
 * node:crypto has no XSalsa20, so secretbox uses `tweetnacl` (an audited port of NaCl).
 * KMS is not implemented.
 *
 * Also read: values of mk8s' earlier field-level format (`{"k8s:enc":"k8s:enc:aesgcm:v1:…"}`
 * beside clear metadata), marked stale, so clusters made before whole-object encryption keep their
 * Secrets and rewrite them on update.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import nacl from 'tweetnacl';
import { ApiError } from '@mk8s/api';
import type { ValueTransformer } from '../storage/value-transformer.js';

const ENC_PREFIX = 'k8s:enc:';
/** mk8s' earlier field-level format (read only). */
const LEGACY_FIELD = '"k8s:enc":"k8s:enc:aesgcm:v1:';

export type ProviderKind = 'aesgcm' | 'aescbc' | 'secretbox' | 'identity';
export interface EncryptionKey { name: string; secret: Buffer }
/** One provider of a resource's list: the first writes, all may read. */
export type EncryptionProvider = { kind: 'aesgcm' | 'aescbc' | 'secretbox'; keys: EncryptionKey[] } | { kind: 'identity' };

export interface EncryptionConfig {
  /** etcd key prefix (e.g. /registry/secrets/) → providers in order. */
  prefixes: Map<string, EncryptionProvider[]>;
  /** The resources as listed (`secrets`, `deployments.apps`), for messages. */
  resources: string[];
}

/** Key lengths by provider, as upstream's config validation (AES-128/192/256; secretbox exactly 32). */
const KEY_SIZES: Record<'aesgcm' | 'aescbc' | 'secretbox', number[]> = { aesgcm: [16, 24, 32], aescbc: [16, 24, 32], secretbox: [32] };

/** Parses an apiserver.config.k8s.io/v1 EncryptionConfiguration (YAML or JSON). Throws on errors, as upstream refuses to start. */
export function parseEncryptionConfig(text: string): EncryptionConfig {
  const doc = yaml.load(text) as { kind?: string; resources?: { resources?: string[]; providers?: Record<string, { keys?: { name?: string; secret?: string }[] }>[] }[] };
  if (!doc || doc.kind !== 'EncryptionConfiguration') throw new Error('encryption provider config: kind must be EncryptionConfiguration');
  const prefixes = new Map<string, EncryptionProvider[]>();
  const resources: string[] = [];
  for (const r of doc.resources ?? []) {
    const providers: EncryptionProvider[] = [];
    for (const p of r.providers ?? []) {
      const [kind, body] = Object.entries(p)[0] ?? [];
      if (kind === 'identity') providers.push({ kind: 'identity' });
      else if (kind === 'aesgcm' || kind === 'aescbc' || kind === 'secretbox') {
        const names = new Set<string>();
        const keys = (body?.keys ?? []).map((k) => {
          const secret = Buffer.from(k.secret ?? '', 'base64');
          if (!k.name || k.name.includes(':')) throw new Error(`encryption provider config: ${kind} key name "${k.name ?? ''}" must be set and contain no ':'`);
          if (names.has(k.name)) throw new Error(`encryption provider config: ${kind} key name "${k.name}" is listed twice`);
          names.add(k.name);
          const sizes = KEY_SIZES[kind];
          if (!sizes.includes(secret.length)) throw new Error(`encryption provider config: ${kind} key "${k.name}" must be ${sizes.length > 1 ? '16, 24 or 32' : '32'} bytes (base64), got ${secret.length}`);
          return { name: k.name, secret };
        });
        if (keys.length === 0) throw new Error(`encryption provider config: ${kind} needs at least one key`);
        providers.push({ kind, keys });
      } else throw new Error(`encryption provider config: unsupported provider "${String(kind)}" (aesgcm, aescbc, secretbox, identity)`);
    }
    if (providers.length === 0) throw new Error('encryption provider config: a resource needs at least one provider');
    for (const res of r.resources ?? []) {
      if (res.includes('*')) throw new Error(`encryption provider config: wildcard resource "${res}" is not supported; list resources by name`);
      const [resource, group] = res.split(/\.(.*)/s) as [string, string | undefined];
      const prefix = group ? `/registry/${group}/${resource}/` : `/registry/${resource}/`;
      if (prefixes.has(prefix)) throw new Error(`encryption provider config: resource "${res}" is listed twice`);
      prefixes.set(prefix, providers);
      resources.push(res);
    }
  }
  return { prefixes, resources };
}

export function loadEncryptionConfig(path: string): EncryptionConfig { return parseEncryptionConfig(readFileSync(path, 'utf8')); }

/** One reader/writer of the chain: a prefix ('' for identity) and what follows it. */
interface PrefixTransformer {
  prefix: Buffer;
  seal(key: string, data: Buffer): Buffer;
  open(key: string, body: Buffer): Buffer;
}

const gcmAlg = (k: Buffer) => `aes-${k.length * 8}-gcm` as 'aes-256-gcm';
const cbcAlg = (k: Buffer) => `aes-${k.length * 8}-cbc` as 'aes-256-cbc';

function aesgcm(k: EncryptionKey): PrefixTransformer {
  return {
    prefix: Buffer.from(`${ENC_PREFIX}aesgcm:v1:${k.name}:`),
    seal(key, data) {
      const nonce = randomBytes(12);
      const c = createCipheriv(gcmAlg(k.secret), k.secret, nonce);
      c.setAAD(Buffer.from(key));
      return Buffer.concat([nonce, c.update(data), c.final(), c.getAuthTag()]);
    },
    open(key, body) {
      if (body.length < 28) throw new Error('the stored data is too short');
      const d = createDecipheriv(gcmAlg(k.secret), k.secret, body.subarray(0, 12));
      d.setAAD(Buffer.from(key));
      d.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([d.update(body.subarray(12, body.length - 16)), d.final()]);
    },
  };
}

function aescbc(k: EncryptionKey): PrefixTransformer {
  return {
    prefix: Buffer.from(`${ENC_PREFIX}aescbc:v1:${k.name}:`),
    seal(_key, data) {
      const iv = randomBytes(16);
      const c = createCipheriv(cbcAlg(k.secret), k.secret, iv);
      return Buffer.concat([iv, c.update(data), c.final()]);
    },
    open(_key, body) {
      if (body.length < 32 || body.length % 16 !== 0) throw new Error('the stored data is not a whole number of blocks');
      const d = createDecipheriv(cbcAlg(k.secret), k.secret, body.subarray(0, 16));
      return Buffer.concat([d.update(body.subarray(16)), d.final()]);
    },
  };
}

const SECRETBOX_NONCE = nacl.secretbox.nonceLength;                  // 24
const SECRETBOX_OVERHEAD = nacl.secretbox.overheadLength;            // 16 (Poly1305 tag, before the ciphertext)

/** As upstream's secretbox transformer: random 24-byte nonce + secretbox.Seal (tag + ciphertext); no additional data. */
function secretbox(k: EncryptionKey): PrefixTransformer {
  const key = new Uint8Array(k.secret);
  return {
    prefix: Buffer.from(`${ENC_PREFIX}secretbox:v1:${k.name}:`),
    seal(_key, data) {
      const nonce = randomBytes(SECRETBOX_NONCE);
      return Buffer.concat([nonce, nacl.secretbox(data, nonce, key)]);
    },
    open(_key, body) {
      if (body.length < SECRETBOX_NONCE + SECRETBOX_OVERHEAD) throw new Error('the stored data was shorter than the required size');
      const plain = nacl.secretbox.open(body.subarray(SECRETBOX_NONCE), body.subarray(0, SECRETBOX_NONCE), key);
      if (!plain) throw new Error('secretbox: the stored data failed authentication');
      return Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
    },
  };
}

const SEALERS = { aesgcm, aescbc, secretbox } as const;

const IDENTITY: PrefixTransformer = {
  prefix: Buffer.alloc(0),
  seal: (_key, data) => data,
  open(_key, body) {
    // As upstream's identity: encrypted data is not plaintext (a provider for it is missing).
    if (body.subarray(0, ENC_PREFIX.length).toString() === ENC_PREFIX) throw new Error('identity transformer tried to read encrypted data');
    return body;
  },
};

function chainOf(providers: readonly EncryptionProvider[]): PrefixTransformer[] {
  return providers.flatMap((p) => p.kind === 'identity' ? [IDENTITY] : p.keys.map(SEALERS[p.kind]));
}

/** The ValueTransformer of one resource's provider list. */
export function providersTransformer(providers: readonly EncryptionProvider[]): ValueTransformer {
  const chain = chainOf(providers);
  const writer = chain[0]!;
  const legacyKeys = providers.flatMap((p) => (p.kind === 'aesgcm' ? p.keys : []));
  return {
    toStorage(key, data) {
      const sealed = writer.seal(key, data);
      return writer.prefix.length ? Buffer.concat([writer.prefix, sealed]) : sealed;
    },
    fromStorage(key, value) {
      const errs: string[] = [];
      for (let i = 0; i < chain.length; i++) {
        const t = chain[i]!;
        if (value.length < t.prefix.length || !value.subarray(0, t.prefix.length).equals(t.prefix)) continue;
        try {
          let data = t.open(key, value.subarray(t.prefix.length));
          let stale = i !== 0;
          if (t === IDENTITY && value.includes(LEGACY_FIELD)) { data = openLegacy(key, data, legacyKeys); stale = true; }
          return { data, stale };
        } catch (err) {
          errs.push((err as Error).message);                              // another key of the same name may follow
        }
      }
      throw new ApiError('InternalError', `Internal error occurred: unable to transform the stored value of ${key}: ${errs.length ? errs.join('; ') : 'no matching prefix found'}`);
    },
  };
}

/** mk8s' earlier format: clear apiVersion/kind/metadata, the rest sealed into one `k8s:enc` field (base64 nonce|ct|tag, key as AAD). */
function openLegacy(key: string, data: Buffer, keys: readonly EncryptionKey[]): Buffer {
  const obj = JSON.parse(data.toString()) as Record<string, unknown>;
  const sealed = String(obj['k8s:enc']);
  const rest = sealed.slice(`${ENC_PREFIX}aesgcm:v1:`.length);
  const colon = rest.indexOf(':');
  const name = rest.slice(0, colon);
  const body = Buffer.from(rest.slice(colon + 1), 'base64');
  for (const k of keys) {
    if (k.name !== name) continue;
    try {
      const plain = aesgcm(k).open(key, body);
      const { 'k8s:enc': _e, ...clear } = obj;
      return Buffer.from(JSON.stringify({ ...clear, ...(JSON.parse(plain.toString()) as Record<string, unknown>) }));
    } catch { /* the next key of that name */ }
  }
  throw new Error(`no key "${name}" opens the stored value`);
}

/**
 * The apiserver's transformer: by key prefix, each listed resource's provider chain; every other
 * key untouched. Cheap for unlisted keys (a few prefix compares).
 */
export function encryptionTransformer(cfg: EncryptionConfig): ValueTransformer {
  const entries = [...cfg.prefixes].map(([prefix, providers]) => ({ prefix, t: providersTransformer(providers) }));
  const find = (key: string) => entries.find((e) => key.startsWith(e.prefix))?.t;
  return {
    toStorage: (key, data) => find(key)?.toStorage(key, data) ?? data,
    fromStorage: (key, value) => find(key)?.fromStorage(key, value) ?? { data: value, stale: false },
  };
}

/**
 * The health check of the encryption config (the analogue of upstream's /healthz/kms-providers,
 * which probes each KMS plugin with an encrypt/decrypt round trip): every key of every provider
 * seals and opens a probe value, and the write provider's output reads back. Throws the first failure.
 */
export function checkEncryptionConfig(cfg: EncryptionConfig): void {
  const probe = Buffer.from('{"kind":"HealthCheck"}');
  for (const [prefix, providers] of cfg.prefixes) {
    const key = `${prefix}healthz`;
    for (const t of chainOf(providers)) {
      const back = t.open(key, t.seal(key, probe));
      if (!back.equals(probe)) throw new Error(`encryption provider for ${prefix} failed its round trip`);
    }
    const tr = providersTransformer(providers);
    if (!tr.fromStorage(key, tr.toStorage(key, probe)).data.equals(probe)) throw new Error(`encryption of ${prefix} failed its round trip`);
  }
}
