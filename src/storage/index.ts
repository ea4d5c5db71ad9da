// The storage layer's public surface: the backend contract, its filesystem driver and the event log.
export * from './backend.js';
export { createFsBackend, type FsBackendOptions } from './fs/fs-backend.js';
export {
  createEventLog,
  type EventLog,
  type EventLogOptions,
  type EventLogTx,
  type ReadOptions,
} from './event-log.js';
export { createBlobStore, type BlobStore, type BlobStoreOptions, type PutResult } from './blob-store.js';
export type { PackWriter } from './pack/pack-writer.js';
