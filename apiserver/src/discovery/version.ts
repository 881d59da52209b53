/**
 * GET /version (k8s.io/apimachinery/pkg/version.Info). The gcloud kubectl dispatcher on these
 * machines picks the kubectl binary from `minor`, so it must stay "32": that is the kubectl the
 * project tests against.
 */
export interface VersionInfo {
  major: string; minor: string; gitVersion: string; gitCommit: string; gitTreeState: string;
  buildDate: string; goVersion: string; compiler: string; platform: string;
}

export const SERVER_VERSION: VersionInfo = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-mk8s',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'tsc',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};
