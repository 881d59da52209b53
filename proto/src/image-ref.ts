/**
 * normalizeImageRef returns Docker's familiar form of an image reference, so that `busybox`,
 * `busybox:latest` and `docker.io/library/busybox:latest` compare equal (distribution/reference
 * FamiliarString). A reference with a digest keeps it and gets no tag.
 */
export function normalizeImageRef(ref: string): string {
  let r = ref.trim();
  if (r.startsWith('docker.io/library/')) r = r.slice('docker.io/library/'.length);
  else if (r.startsWith('docker.io/')) r = r.slice('docker.io/'.length);
  if (r.includes('@')) return r;
  const lastSlash = r.lastIndexOf('/');
  return r.slice(lastSlash + 1).includes(':') ? r : `${r}:latest`;
}
