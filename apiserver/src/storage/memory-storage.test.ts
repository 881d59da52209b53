import { defineStorageConformance } from '../testing/storage-conformance.js';
import { MemoryStorage } from './memory-storage.js';

defineStorageConformance('memory', async () => {
  const storage = new MemoryStorage();
  return { storage, teardown: () => storage.close(), compact: async (rev) => storage.compact(rev) };
});
