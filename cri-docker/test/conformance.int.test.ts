import { defineRuntimeServiceConformance } from '@mk8s/proto/testing';
import { ensureImages, startTestShim } from '../src/testing/index.js';

// The same suite the FakeRuntimeService passes, against the real shim process over its socket.
defineRuntimeServiceConformance('cri-docker', async () => {
  ensureImages();
  const shim = await startTestShim();
  return { runtime: shim.runtime, images: shim.images, image: 'mk8s/busybox:1.36', expectPodIp: true, teardown: shim.teardown };
});
