/**
 * Pure decisions of the certificate controllers (upstream pkg/controller/certificates/signer and
 * pkg/apis/certificates helpers): whether a request is ready to sign, whether a well-known signer
 * accepts what it asks for, and how long the certificate lives.
 */
import type { ParsedCertificateRequest } from '@mk8s/component-base/pki';

export const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING = 'kubernetes.io/kubelet-serving';
/** The signers the csrsigning controller serves with the cluster CA. */
export const KUBERNETES_SIGNERS: readonly string[] = [KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING];

export interface CsrCondition { type?: string; status?: string; reason?: string; message?: string; lastUpdateTime?: string; lastTransitionTime?: string }
export interface Csr {
  [k: string]: unknown;
  apiVersion?: string; kind?: string;
  metadata: { name: string; resourceVersion?: string; creationTimestamp?: string };
  spec?: { request?: string; signerName?: string; expirationSeconds?: number; usages?: string[]; username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  status?: { conditions?: CsrCondition[]; certificate?: string };
}

const hasTrue = (csr: Csr, type: string) => (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** Approved, not Denied, not Failed, no certificate yet (IsCertificateRequestApproved and the signer's fast path). */
export function readyToSign(csr: Csr): boolean {
  return hasTrue(csr, 'Approved') && !hasTrue(csr, 'Denied') && !hasTrue(csr, 'Failed') && !csr.status?.certificate;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * Whether the signer accepts the request (upstream's per-signer validators, ValidateKubeletClientCSR
 * and ValidateKubeletServingCSR). Returns the reason it does not, or undefined.
 */
export function signerRejects(signerName: string, req: ParsedCertificateRequest, usages: readonly string[]): string | undefined {
  const rsa = req.keyAlgorithm.startsWith('RSA');
  const allowed = (u: string[]) => (rsa ? [...u, 'key encipherment'] : u);
  const subsetOf = (ok: string[]) => usages.every((u) => ok.includes(u));
  switch (signerName) {
    case KUBE_APISERVER_CLIENT: {
      const ok = ['digital signature', 'key encipherment', 'client auth'];
      if (!usages.includes('client auth') || !subsetOf(ok)) return `invalid usage for client certificate: ${usages.join(',')}`;
      return undefined;
    }
    case KUBE_APISERVER_CLIENT_KUBELET: {
      if (!sameSet(req.organizations, ['system:nodes'])) return 'subject organization is not system:nodes';
      if (req.dnsNames.length) return 'DNS subjectAltNames are not allowed';
      if (req.emails.length) return 'Email subjectAltNames are not allowed';
      if (req.ips.length) return 'IP subjectAltNames are not allowed';
      if (req.uris.length) return 'URI subjectAltNames are not allowed';
      if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
      if (!usages.includes('client auth') || !subsetOf(allowed(['digital signature', 'client auth']))) {
        return `usages did not match [${allowed(['digital signature', 'client auth']).join(' ')}]`;
      }
      return undefined;
    }
    case KUBELET_SERVING: {
      if (!sameSet(req.organizations, ['system:nodes'])) return 'subject organization is not system:nodes';
      if (req.dnsNames.length === 0 && req.ips.length === 0) return 'DNS or IP subjectAltName is required';
      if (req.emails.length) return 'Email subjectAltNames are not allowed';
      if (req.uris.length) return 'URI subjectAltNames are not allowed';
      if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
      if (!usages.includes('server auth') || !subsetOf(allowed(['digital signature', 'server auth']))) {
        return `usages did not match [${allowed(['digital signature', 'server auth']).join(' ')}]`;
      }
      return undefined;
    }
    default:
      return `unknown signer ${signerName}`;
  }
}

/** The certificate's life: the requested expirationSeconds, never more than the signer's maximum (upstream duration()). */
export function certificateDurationMs(expirationSeconds: number | undefined, maxMs: number): number {
  if (expirationSeconds === undefined || expirationSeconds === null) return maxMs;
  // The API allows ≥ 600 s; a smaller value (older objects) is raised to it, as upstream does.
  return Math.min(Math.max(expirationSeconds, 600) * 1000, maxMs);
}

/** The Failed condition a signer adds when it will not sign (SignerValidationFailure). */
export function failedCondition(message: string, now: string): CsrCondition {
  return { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message, lastUpdateTime: now };
}
