/**
 * Chain names as upstream kube-proxy (pkg/proxy/iptables): a prefix plus the first 16 characters
 * of base32(sha256(...)), so the same Service port gets the same chain in every kube-proxy.
 */
import { createHash } from 'node:crypto';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 with padding (Go's base32.StdEncoding). */
export function base32(buf: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) { out += B32[(value >>> (bits - 5)) & 31]; bits -= 5; }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

function hash16(s: string): string {
  return base32(createHash('sha256').update(s).digest()).slice(0, 16);
}

/** "ns/name:port" or "ns/name" for an unnamed port (upstream ServicePortName.String()). */
export function servicePortName(namespace: string, name: string, port: string): string {
  return `${namespace}/${name}${port ? `:${port}` : ''}`;
}

/** KUBE-SVC-<hash(servicePortName + protocol)>, protocol lower-case as upstream. */
export function serviceChain(spn: string, protocol: string): string { return `KUBE-SVC-${hash16(spn + protocol.toLowerCase())}`; }
/** KUBE-EXT-<same hash>: external (NodePort) traffic for the service port. */
export function externalChain(spn: string, protocol: string): string { return `KUBE-EXT-${hash16(spn + protocol.toLowerCase())}`; }
/** KUBE-SEP-<hash(servicePortName + protocol + "ip:port")>. */
export function endpointChain(spn: string, protocol: string, endpoint: string): string { return `KUBE-SEP-${hash16(spn + protocol.toLowerCase() + endpoint)}`; }
