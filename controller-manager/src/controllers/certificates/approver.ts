/**
 * CSR approving controller (upstream pkg/controller/certificates/approver, `csrapproving`):
 * auto-approves kubelet client certificate requests (`kubernetes.io/kube-apiserver-client-kubelet`,
 * a valid kubelet client CSR) when a SubjectAccessReview says the requestor may: `create
 * certificatesigningrequests/selfnodeclient` for a node renewing its own identity (requestor =
 * the CN), else `create certificatesigningrequests/nodeclient` (bootstrap). Watches
 * CertificateSigningRequests; key: the name; creates SubjectAccessReviews, writes /approval.
 */
import { CertificateSigningRequests, SubjectAccessReviews, type KubeObject } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { parseCertificateRequest, type ParsedCertificateRequest } from '@mk8s/component-base/pki';
import { BaseController, type ControllerContext } from '../../controller.js';
import { KUBE_APISERVER_CLIENT_KUBELET, signerRejects, type Csr } from './decisions.js';

interface Recognizer {
  subresource: 'selfnodeclient' | 'nodeclient';
  recognize(csr: Csr, req: ParsedCertificateRequest): boolean;
  message: string;
}

const isNodeClient = (csr: Csr, req: ParsedCertificateRequest) =>
  csr.spec?.signerName === KUBE_APISERVER_CLIENT_KUBELET && signerRejects(KUBE_APISERVER_CLIENT_KUBELET, req, csr.spec?.usages ?? []) === undefined;

/** Upstream's recognizers, in order. */
export const RECOGNIZERS: readonly Recognizer[] = [
  { subresource: 'selfnodeclient', recognize: (c, r) => c.spec?.username === r.commonName && isNodeClient(c, r), message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' },
  { subresource: 'nodeclient', recognize: isNodeClient, message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
];

export class CsrApprovingController extends BaseController {
  static readonly NAME = 'csrapproving';
  readonly name = CsrApprovingController.NAME;
  readonly csrs: SharedInformer<Csr>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'csrapproving');
    this.csrs = ctx.informers.informerFor<Csr>(CertificateSigningRequests);
    this.csrs.addEventHandler({
      onAdd: (c) => this.enqueue(c.metadata.name),
      onUpdate: (_, c) => this.enqueue(c.metadata.name),
    });
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const cached = this.csrs.lister.get(name);
    if (!cached || cached.status?.certificate) return;
    if ((cached.status?.conditions ?? []).some((c) => c.type === 'Approved' || c.type === 'Denied')) return;
    // As upstream (sarapprove.go handle): a request that does not parse is an error, whatever the
    // signer: returned to the worker, which logs it and retries the key with backoff.
    let req: ParsedCertificateRequest;
    try { req = parseCertificateRequest(Buffer.from(cached.spec?.request ?? '', 'base64')); } catch (err) {
      throw new Error(`unable to parse csr "${name}": ${err instanceof Error ? err.message : String(err)}`);
    }
    if (cached.spec?.signerName !== KUBE_APISERVER_CLIENT_KUBELET) return;
    const tried: string[] = [];
    for (const r of RECOGNIZERS) {
      if (!r.recognize(cached, req)) continue;
      tried.push(r.subresource);
      if (!await this.allowed(cached, r.subresource, signal)) continue;
      const csr = structuredClone(cached);
      csr.status = { ...(csr.status ?? {}), conditions: [...(csr.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message }] };
      await this.ctx.client.resource<Csr>(CertificateSigningRequests).patch(name, 'merge', { metadata: { resourceVersion: csr.metadata.resourceVersion }, status: { conditions: csr.status.conditions } }, { signal, subresource: 'approval' });
      this.log.info({ csr: name, requestor: cached.spec?.username, via: r.subresource }, 'Approved certificate signing request');
      return;
    }
    // upstream's IgnorableError: logged, not retried (a later change of the CSR brings it back).
    if (tried.length) this.log.debug({ csr: name, tried }, `recognized csr "${name}" as [${tried.join(' ')}] but subject access review was not approved`);
  }

  /** A SubjectAccessReview for the requestor: create certificatesigningrequests/<sub>. */
  private async allowed(csr: Csr, subresource: string, signal: AbortSignal): Promise<boolean> {
    const spec = csr.spec ?? {};
    const sar = await this.ctx.client.resource<KubeObject>(SubjectAccessReviews).create({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: { name: '' },
      spec: {
        user: spec.username ?? '', ...(spec.uid ? { uid: spec.uid } : {}), groups: spec.groups ?? [],
        ...(spec.extra ? { extra: spec.extra } : {}),
        resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'create', subresource, version: '*' },
      },
    } as unknown as KubeObject, { signal });
    return (sar['status'] as { allowed?: boolean } | undefined)?.allowed === true;
  }
}
