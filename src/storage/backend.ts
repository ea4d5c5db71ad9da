// The storage backend contract: the only interface through which ckpt touches the store's files.
// Keys are store-relative paths with `/` separators (e.g. `blobs/ab/cdef…`). The local filesystem is
// the first driver (fs-backend.ts); every driver must pass backend-contract.ts.

export interface ObjectStat {
  size: number;
  mtimeMs: number;
}

/** An internal file of the driver that a crash can leave behind (a temp file, a quarantined object). */
export interface Leftover {
  /** Its store-relative name (not a valid object key). */
  key: string;
  bytes: number;
  mtimeMs: number;
  /** For a quarantined object: the key it was taken from. */
  quarantineOf?: string;
}

/** An object taken out of its name by `quarantine`. */
export interface Quarantined {
  key: string;
  stat: ObjectStat;
}

export interface LockOptions {
  /** How long to wait for the lock before failing with LOCKED (default 10 s). */
  timeoutMs?: number;
  /**
   * Keeps the lock once `fn` has returned (its writes are durable by then) for the next caller in
   * this process, releasing it after `idleMs` without use — or at the end of a use `maxMs` after it
   * was taken (others waiting for it are not starved). A daemon's session locks (CkptOptions.defer):
   * an agent's tool call takes its session's lock twice within milliseconds. Default: released
   * before withLock returns. A backend may ignore it.
   */
  linger?: { idleMs: number; maxMs: number };
}

/** An object held open for range reads (StoreBackend.openRange). */
export interface RangeReader {
  /** `length` bytes from `offset` (fewer at the end). */
  read(offset: number, length: number): Promise<Buffer>;
  close(): void;
}

export interface StoreBackend {
  /** A short name of the driver, e.g. `fs`. */
  readonly kind: string;
  /** Whole content, or undefined when missing. A symlink or non-regular file counts as missing. */
  read(key: string): Promise<Buffer | undefined>;
  /** `length` bytes from `offset` (fewer at the end), or undefined when missing. */
  readRange(key: string, offset: number, length: number): Promise<Buffer | undefined>;
  /** Everything from `offset` to the end as it is now (empty past the end), or undefined when missing: a log's new tail in one open. */
  readFrom(key: string, offset: number): Promise<Buffer | undefined>;
  /**
   * Optional: the object opened once for many range reads (a restore's reads of hundreds of blobs
   * from one pack), undefined when missing. Reads see the object opened, even if it is replaced or
   * removed meanwhile; the caller closes it once no read is in flight.
   */
  openRange?(key: string): RangeReader | undefined;
  /**
   * Atomically and durably replaces the content of `key` (temp + fsync + rename + dir fsync). With
   * `durable: false` — only for caches rebuilt from the logs when missing, unreadable or behind — the
   * replacement is still atomic but may be lost in a crash (no fsyncs).
   */
  write(key: string, data: Uint8Array, options?: { mode?: number; durable?: boolean }): Promise<void>;
  /**
   * Durably creates `key` unless it exists. Returns false when it existed — then its mtime is
   * freshened (so a concurrent GC's age gate protects it) and its content is left alone.
   */
  create(key: string, data: Uint8Array): Promise<boolean>;
  /**
   * Durably appends bytes (creating the object if missing). Callers serialize appends with `withLock`;
   * `lease` (withLock's, while it runs) lets a backend keep the object open for the next append under
   * the same lease. A backend may ignore it.
   */
  append(key: string, data: Uint8Array, lease?: object): Promise<void>;
  /** Cuts the object to `size` bytes, durably (used to repair a torn log tail). */
  truncate(key: string, size: number): Promise<void>;
  /** Size and mtime, or undefined when missing (symlink / non-regular counts as missing). */
  stat(key: string): Promise<ObjectStat | undefined>;
  /** Sets the mtime to now; false (and nothing done) when missing. */
  touch(key: string): Promise<boolean>;
  /** Deletes; missing is not an error. */
  remove(key: string): Promise<void>;
  /** Deletes everything under a prefix ("folder"); missing is not an error. */
  removeTree(prefix: string): Promise<void>;
  /** Keys of regular objects directly or indirectly under `prefix` (store-relative, sorted). */
  list(prefix: string): Promise<string[]>;
  /** Names (not keys) of the direct children under `prefix`, objects and folders alike; sorted. */
  children(prefix: string): Promise<string[]>;
  /**
   * Takes an object out of its name into a hidden quarantine (GC deleting without a window for a
   * concurrent put: while quarantined the object is missing to read/stat/create, so a put writes it
   * anew). The returned stat is the object's as it was when taken. Undefined when missing.
   */
  quarantine(key: string): Promise<Quarantined | undefined>;
  /** Puts a quarantined object back under `key` (a copy written there meanwhile stays) and drops the quarantine. */
  release(quarantineKey: string, key: string): Promise<void>;
  /** The driver's leftovers: temp files of interrupted writes and quarantined objects, with size and mtime. */
  leftovers(): Promise<Leftover[]>;
  /** Deletes a leftover if it is still there and last modified before `cutoffMs`; the bytes freed (0 when kept). */
  removeLeftover(key: string, cutoffMs: number): Promise<number>;
  /**
   * Paths (relative to the store root) of symlinks below it — folder stores only. ckpt never makes
   * one, so each was planted; writes refuse them and `verify` reports them.
   */
  links?(): Promise<string[]>;
  /**
   * Runs `fn` holding an exclusive cross-process lock named `key`. A lock left by a dead process
   * (SIGKILL) is taken over. Fails with LOCKED when not acquired within the timeout. `fn` may be
   * given a lease: an object that is the same for two calls only when this process held the lock
   * without a break from the first to the second (a lingering lock reused, `linger`): nothing
   * of another process that takes the lock ran in between. A backend may give none.
   */
  withLock<T>(key: string, fn: (lease?: object) => Promise<T>, options?: LockOptions): Promise<T>;
  /** Lets go of what the backend holds past its calls (lingering locks, connections); the store closing. */
  close?(): Promise<void>;
}
