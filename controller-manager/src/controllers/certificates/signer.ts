/**
 * CSR signing controller (upstream pkg/controller/certificates/signer, `csrsigning`): signs
 * approved CertificateSigningRequests for the well-known Kubernetes signers with the cluster CA
 * (--cluster-signing-cert-file/--cluster-signing-key-file). Watches CertificateSigningRequests;
 * key: the name; writes status.certificate, or a Failed condition when the signer does not accept
 * the request, through /status. expirationSeconds is honoured up to --cluster-signing-duration.
 */
import { CertificateSigningRequests } from '@mk8s/api';
import type { SharedInformer } from '@mk8s/client';
import { loadCa, parseCertificateRequest, signCertificateRequest, type CertificateAuthority } from '@mk8s/component-base/pki';
import { BaseController, type ControllerContext } from '../../controller.js';
import { certificateDurationMs, failedCondition, KUBERNETES_SIGNERS, readyToSign, signerRejects, type Csr } from './decisions.js';

/** Upstream's --cluster-signing-duration default: one year. */
export const DEFAULT_CLUSTER_SIGNING_DURATION_MS = 365 * 24 * 3600_000;

export interface CsrSigningOptions {
  /** PEM files of the signing CA (ECDSA P-256, as the cluster PKI makes it). */
  certFile: string;
  keyFile: string;
  /** Longest certificate issued. @default one year */
  durationMs?: number;
  /** Signer names served. @default the three kubernetes.io signers */
  signerNames?: readonly string[];
}

export class CsrSigningController extends BaseController {
  static readonly NAME = 'csrsigning';
  readonly name = CsrSigningController.NAME;
  readonly csrs: SharedInformer<Csr>;
  private ca: Promise<CertificateAuthority> | undefined;
  private readonly signers: readonly string[];

  constructor(ctx: ControllerContext, private readonly o: CsrSigningOptions) {
    super(ctx, 'certificate');
    this.signers = o.signerNames ?? KUBERNETES_SIGNERS;
    this.csrs = ctx.informers.informerFor<Csr>(CertificateSigningRequests);
    this.csrs.addEventHandler({
      onAdd: (c) => this.enqueue(c.metadata.name),
      onUpdate: (_, c) => this.enqueue(c.metadata.name),
    });
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const cached = this.csrs.lister.get(name);
    if (!cached || !this.signers.includes(cached.spec?.signerName ?? '') || !readyToSign(cached)) return;
    const csr = structuredClone(cached);
    const client = this.ctx.client.resource<Csr>(CertificateSigningRequests);
    let parsed;
    try {
      parsed = parseCertificateRequest(Buffer.from(csr.spec?.request ?? '', 'base64'));
    } catch (err) {
      throw new Error(`unable to parse csr "${name}": ${(err as Error).message}`);
    }
    const usages = csr.spec?.usages ?? [];
    const why = signerRejects(csr.spec!.signerName!, parsed, usages);
    if (why) {
      csr.status = { ...(csr.status ?? {}), conditions: [...(csr.status?.conditions ?? []), failedCondition(why, new Date(this.ctx.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'))] };
      await client.updateStatus(csr, { signal });
      this.log.info({ csr: name, reason: why }, 'Refused to sign certificate signing request');
      return;
    }
    this.ca ??= loadCa({ cert: this.o.certFile, key: this.o.keyFile });
    let ca: CertificateAuthority;
    try { ca = await this.ca; } catch (err) { this.ca = undefined; throw err; }
    const durationMs = certificateDurationMs(csr.spec?.expirationSeconds, this.o.durationMs ?? DEFAULT_CLUSTER_SIGNING_DURATION_MS);
    const pem = await signCertificateRequest(ca, parsed, { usages, durationMs, now: new Date(this.ctx.clock.now()) });
    csr.status = { ...(csr.status ?? {}), certificate: Buffer.from(pem).toString('base64') };
    await client.updateStatus(csr, { signal });
    this.log.info({ csr: name, signerName: csr.spec?.signerName, subject: parsed.commonName }, 'Signed certificate signing request');
  }
}
