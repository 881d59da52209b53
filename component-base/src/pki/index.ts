export {
  ensurePki, pkiPaths, ensureCa, loadCa, issueCertificate, subjectOf, APISERVER_DNS_NAMES, APISERVER_DEFAULT_IPS,
  type PkiOptions, type PkiPaths, type CertPaths, type CertSpec, type CertificateAuthority,
} from './pki.js';
export { parseCertificateRequest, signCertificateRequest, type ParsedCertificateRequest, type SignOptions } from './csr.js';
