export { MemoryStorage, type MemoryStorageOptions } from '../storage/memory-storage.js';
