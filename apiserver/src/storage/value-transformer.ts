/**
 * ValueTransformer: what a stored value's bytes go through between the JSON of an object and etcd
 * (upstream k8s.io/apiserver/pkg/storage/value.Transformer). Encryption at rest is one: the whole
 * serialized object becomes `k8s:enc:<provider>:v1:<keyname>:` + ciphertext. Etcd3Storage calls
 * it on every value it writes and reads, watch events included, so the watch cache and every
 * reader above it only ever see plaintext.
 *
 * Contract: synchronous and pure per call (node:crypto's ciphers are synchronous; a KMS provider
 * would need an async variant). `key` is the etcd key: providers bind it as authenticated data, so
 * a value copied under another key does not decrypt. `fromStorage` throws when no provider can
 * read the value (the read then fails with InternalError, as upstream). `stale` means the value was
 * not written by the current write provider (plaintext from before encryption, an older key): the
 * next update writes it again even when the object did not change (upstream's stale rewrite).
 */
export interface ValueTransformer {
  fromStorage(key: string, value: Buffer): { data: Buffer; stale: boolean };
  toStorage(key: string, data: Buffer): Buffer;
}

/** No transformation (upstream identity). */
export const IDENTITY_TRANSFORMER: ValueTransformer = {
  fromStorage: (_key, value) => ({ data: value, stale: false }),
  toStorage: (_key, data) => data,
};
