/**
 * The certificates.k8s.io admission plugins upstream enables by default
 * (plugin/pkg/admission/certificates/{approval,signing,subjectrestriction}):
 * - CertificateApproval: an /approval write needs the `approve` verb on `signers` named after the
 *   request's signerName (or `<domain>/*`).
 * - CertificateSigning: a /status write that changes the certificate or conditions needs `sign` on it.
 * - CertificateSubjectRestriction: no kube-apiserver-client request for the system:masters group.
 * All validate-only; they reject with 403 Forbidden as upstream words it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@mk8s/api';
import { parseCertificateRequest } from '@mk8s/component-base/pki';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import type { UserInfo } from '../../auth/authentication.js';
import { authorize, type Authorizer } from '../../auth/authorization.js';
import { forbidden } from './namespace-lifecycle.js';

const GROUP = 'certificates.k8s.io';
const RESOURCE = 'certificatesigningrequests';
const QUALIFIED = `${RESOURCE}.${GROUP}`;
const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';

type Csr = { spec?: { signerName?: string; request?: string }; status?: { certificate?: string; conditions?: unknown[] } };
const csrOf = (o: KubeObject | undefined): Csr => (o ?? {}) as Csr;
const isCsr = (a: AdmissionAttributes) => a.resource.group === GROUP && a.resource.resource === RESOURCE;

/**
 * isAuthorizedForSignerName: verb on signers/<signerName>, or on signers/<domain>/* (a wildcard
 * grant for every signer of a domain).
 */
export async function authorizedForSignerName(authorizers: readonly Authorizer[], user: UserInfo, verb: string, signerName: string): Promise<boolean> {
  const attrs = (name: string) => ({ user, verb, resourceRequest: true, apiGroup: GROUP, apiVersion: '*', resource: 'signers', name });
  if ((await authorize(authorizers, attrs(signerName))).allowed) return true;
  const slash = signerName.indexOf('/');
  if (slash < 0) return false;
  return (await authorize(authorizers, attrs(`${signerName.slice(0, slash)}/*`))).allowed;
}

export class CertificateApproval implements AdmissionPlugin {
  readonly name = 'CertificateApproval';
  constructor(private readonly authorizers: readonly Authorizer[]) {}
  handles(op: AdmissionOperation): boolean { return op === 'UPDATE'; }
  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isCsr(a) || a.subresource !== 'approval') return;
    const signer = csrOf(a.object).spec?.signerName ?? '';
    if (!await authorizedForSignerName(this.authorizers, a.user, 'approve', signer)) {
      throw forbidden(QUALIFIED, a.name, `user not permitted to approve requests with signerName "${signer}"`);
    }
  }
}

export class CertificateSigning implements AdmissionPlugin {
  readonly name = 'CertificateSigning';
  constructor(private readonly authorizers: readonly Authorizer[]) {}
  handles(op: AdmissionOperation): boolean { return op === 'UPDATE'; }
  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isCsr(a) || a.subresource !== 'status') return;
    const next = csrOf(a.object), prev = csrOf(a.oldObject);
    if ((next.status?.certificate ?? '') === (prev.status?.certificate ?? '')
      && isDeepStrictEqual(next.status?.conditions ?? [], prev.status?.conditions ?? [])) return;
    const signer = prev.spec?.signerName ?? '';
    if (!await authorizedForSignerName(this.authorizers, a.user, 'sign', signer)) {
      throw forbidden(QUALIFIED, a.name, `user not permitted to sign requests with signerName "${signer}"`);
    }
  }
}

export class CertificateSubjectRestriction implements AdmissionPlugin {
  readonly name = 'CertificateSubjectRestriction';
  handles(op: AdmissionOperation): boolean { return op === 'CREATE'; }
  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isCsr(a) || a.subresource !== '') return;
    const csr = csrOf(a.object);
    if (csr.spec?.signerName !== KUBE_APISERVER_CLIENT) return;
    let orgs: string[];
    try {
      orgs = parseCertificateRequest(Buffer.from(csr.spec.request ?? '', 'base64')).organizations;
    } catch (err) {
      throw forbidden(QUALIFIED, a.name, `failed to parse CSR: ${(err as Error).message}`);
    }
    if (orgs.includes('system:masters')) {
      throw forbidden(QUALIFIED, a.name, `use of ${KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed`);
    }
  }
}

/** The three plugins, in upstream's order. */
export function certificatesAdmission(authorizers: readonly Authorizer[]): AdmissionPlugin[] {
  return [new CertificateApproval(authorizers), new CertificateSigning(authorizers), new CertificateSubjectRestriction()];
}
