// The local-filesystem driver of StoreBackend: key validation, atomic + durable writes (temp beside
// the target, fsync, rename, directory fsync), create-if-absent for content-addressed objects,
// O_NOFOLLOW reads and appends, listing; locks live in fs-lock.ts, leftovers and quarantine in fs-leftovers.ts.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { CkptError, toCkptError } from '../../errors.js';
import type { ObjectStat, StoreBackend } from '../backend.js';
import { leaseHeld, onLeaseEnd, releaseLingeringLocks, withFsLock } from './fs-lock.js';
import { createFsLeftovers } from './fs-leftovers.js';
import { compareKeys, isInternalName, keySegments } from '../store-key.js';
import { walkFiles, walkLinks } from './fs-walk.js';
import { closeQuietly, errnoOf, freshenIfFile, fsyncDir, isMissing, openRegular, readAt, readToEnd, tempBeside, writeAllAndSync, writeTemp } from './fs-io.js';
import { STORE_FILE_MODE, walkStoreDirs } from './fs-private.js';

const C = fs.constants;
/** Bound of the per-backend cache of resolved keys (cleared when full). */
const MAX_RESOLVED_KEYS = 4096;

export interface FsBackendOptions {
  /** The store directory; every key resolves beneath it. */
  dir: string;
  /** Default wait for `withLock` before LOCKED (10 s). */
  lockTimeoutMs?: number;
  /** A lock whose holder has not refreshed it for this long is taken over (3 s; proper-lockfile's minimum is 2 s). */
  lockStaleMs?: number;
}



export function createFsBackend(options: FsBackendOptions): StoreBackend {
  const root = path.resolve(options.dir);
  const defaultTimeoutMs = options.lockTimeoutMs ?? 10_000;
  const staleMs = Math.max(options.lockStaleMs ?? 3_000, 2_000);

  const underRoot = (segments: string[]): string => (segments.length === 0 ? root : path.join(root, ...segments));
  // Keys checked and joined before (a session's log, its lock, its metadata: on every hook call).
  // Only keys that passed the check; a listing's forms (allowRoot) are not cached.
  const resolved = new Map<string, string>();
  /** Resolves a key beneath the store; rejects anything that could land elsewhere or collide with driver files. */
  function resolveKey(key: string, allowRoot = false): string {
    if (allowRoot) return underRoot(keySegments(key, true));
    let abs = resolved.get(key);
    if (abs === undefined) {
      abs = underRoot(keySegments(key));
      if (resolved.size >= MAX_RESOLVED_KEYS) resolved.clear();
      resolved.set(key, abs);
    }
    return abs;
  }

  /** The key's folder, every level checked to be a real folder below the root (made 0700 when missing). */
  const ensureDir = (dir: string): void => void walkStoreDirs(root, dir, true);
  /** Whether the key's folder exists, every level checked (a symlink below the root is FORBIDDEN). */
  const dirExists = (dir: string): boolean => walkStoreDirs(root, dir, false);


  /** Bytes from `offset`: `length` of them, or (undefined) up to the end as the open file's fstat sees it. */
  async function readSpan(key: string, offset: number, length?: number): Promise<Buffer | undefined> {
    const abs = resolveKey(key);
    let opened;
    try {
      opened = openRegular(abs);
      if (!opened) return undefined;
      const buf = Buffer.alloc(Math.max(0, length ?? opened.size - offset));
      return buf.subarray(0, await readAt(opened.fd, buf, offset));
    } catch (err) {
      throw toCkptError(err, `read ${key}`);
    } finally {
      if (opened) closeQuietly(opened.fd);
    }
  }

  return {
    kind: 'fs',
    ...createFsLeftovers(root, (key) => resolveKey(key)),

    links: async () => (await walkLinks(root)).map((abs) => path.relative(root, abs).split(path.sep).join('/')).sort(),

    async read(key) {
      const abs = resolveKey(key);
      let opened;
      try {
        opened = openRegular(abs);
        if (!opened) return undefined;
        return await readToEnd(opened.fd, opened.size);
      } catch (err) {
        throw toCkptError(err, `read ${key}`);
      } finally {
        if (opened) closeQuietly(opened.fd);
      }
    },

    readRange: (key, offset, length) => readSpan(key, offset, length),

    openRange(key) {
      let opened;
      try {
        opened = openRegular(resolveKey(key));
      } catch (err) {
        throw toCkptError(err, `read ${key}`);
      }
      if (!opened) return undefined;
      const { fd } = opened;
      return {
        async read(offset, length) {
          try {
            const buf = Buffer.alloc(Math.max(0, length));
            return buf.subarray(0, await readAt(fd, buf, offset));
          } catch (err) {
            throw toCkptError(err, `read ${key}`);
          }
        },
        close: () => closeQuietly(fd),
      };
    },
    readFrom: (key, offset) => readSpan(key, offset),

    async write(key, data, opts) {
      const abs = resolveKey(key);
      try {
        ensureDir(path.dirname(abs));
        // Private whatever the file had: an older ckpt wrote 0644 (issue 27); a caller may only ask for less.
        const mode = (opts?.mode ?? STORE_FILE_MODE) & STORE_FILE_MODE;
        const tmp = tempBeside(abs);
        const durable = opts?.durable !== false;
        await writeTemp(tmp, data, mode, durable);
        try {
          fs.renameSync(tmp, abs);
        } catch (err) {
          fs.rmSync(tmp, { force: true });
          throw err;
        }
        if (durable) fsyncDir(path.dirname(abs));
      } catch (err) {
        throw toCkptError(err, `write ${key}`);
      }
    },

    async create(key, data) {
      const abs = resolveKey(key);
      try {
        ensureDir(path.dirname(abs));
        if (freshenIfFile(abs)) return false;
        const tmp = tempBeside(abs);
        await writeTemp(tmp, data, STORE_FILE_MODE);
        let created = true;
        try {
          // link() fails with EEXIST instead of replacing: exactly one concurrent creator wins.
          fs.linkSync(tmp, abs);
        } catch (err) {
          if (errnoOf(err) === 'EEXIST' && freshenIfFile(abs)) created = false;
          // Not a regular file there (a symlink planted at an object key), or no hard links here: replace.
          else fs.renameSync(tmp, abs);
        } finally {
          // Cleanup only: the object exists under its name now, so failing to remove the temp name
          // must not fail the create (a leftover temp file is GC's, by age).
          try {
            fs.rmSync(tmp, { force: true });
          } catch {}
        }
        if (created) fsyncDir(path.dirname(abs));
        return created;
      } catch (err) {
        throw toCkptError(err, `create ${key}`);
      }
    },

    async append(key, data, lease) {
      const abs = resolveKey(key);
      let fd: number | undefined;
      let keep = false;
      try {
        // Under a lease this process appended to the log before, with its descriptor kept: one lstat
        // shows the path still names that file (else it is closed and the log opened as below).
        let opened = lease ? keptLogs.take(lease, abs) : undefined;
        let existed = true;
        // An existing log is opened straight away (the hot path: one open, one fstat); its folder
        // and the file are made only when missing.
        if (!opened) {
          try {
            if (!dirExists(path.dirname(abs))) throw Object.assign(new Error('missing folder'), { code: 'ENOENT' });
            opened = openForWrite(abs, key, C.O_WRONLY | C.O_APPEND);
          } catch (err) {
            if (!isMissing(err)) throw err;
            existed = false;
            ensureDir(path.dirname(abs));
            opened = openForWrite(abs, key, C.O_WRONLY | C.O_APPEND | C.O_CREAT);
          }
        }
        fd = opened.fd;
        const before = opened.size;
        try {
          await writeAllAndSync(fd, data);
        } catch (err) {
          // A failed append must not leave its bytes behind (whole or torn): the caller was told it
          // failed, so a later reader must not find the event (a journaled restore would be finished
          // by the next open although its command reported an error). Cut back to where it started.
          try {
            fs.ftruncateSync(fd, before);
            fs.fsyncSync(fd);
          } catch {}
          throw err;
        }
        if (!existed) fsyncDir(path.dirname(abs));
        keep = lease !== undefined && KEEP_LOGS && keptLogs.keep(lease, abs, opened);
      } catch (err) {
        throw toCkptError(err, `append ${key}`);
      } finally {
        if (fd !== undefined && !keep) closeQuietly(fd);
      }
    },

    async truncate(key, size) {
      const abs = resolveKey(key);
      let fd: number | undefined;
      try {
        dirExists(path.dirname(abs));
        fd = openForWrite(abs, key, C.O_WRONLY).fd;
        fs.ftruncateSync(fd, size);
        fs.fsyncSync(fd);
      } catch (err) {
        if (isMissing(err)) throw new CkptError('NOT_FOUND', `cannot truncate missing ${key}`, { key });
        throw toCkptError(err, `truncate ${key}`);
      } finally {
        if (fd !== undefined) closeQuietly(fd);
      }
    },

    async stat(key): Promise<ObjectStat | undefined> {
      const abs = resolveKey(key);
      try {
        // No exception for a missing object (the common answer of "is it stored?"): it costs more than the lstat.
        const st = fs.lstatSync(abs, { throwIfNoEntry: false });
        return st?.isFile() ? { size: st.size, mtimeMs: st.mtimeMs } : undefined;
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw toCkptError(err, `stat ${key}`);
      }
    },

    async touch(key) {
      try {
        const abs = resolveKey(key);
        // The file is looked at first (an lstat changes nothing): a lookup of a blob the store lacks —
        // most, in a restore or a capture of new content — costs one lstat, not the folder walk too.
        // A file found is freshened only once its folders are checked, as before.
        if (!fs.lstatSync(abs, { throwIfNoEntry: false })?.isFile()) return false;
        return dirExists(path.dirname(abs)) && freshenIfFile(abs);
      } catch (err) {
        throw toCkptError(err, `touch ${key}`);
      }
    },

    async remove(key) {
      try {
        const abs = resolveKey(key);
        if (!dirExists(path.dirname(abs))) return;
        fs.unlinkSync(abs);
      } catch (err) {
        if (!isMissing(err)) throw toCkptError(err, `remove ${key}`);
      }
    },

    async removeTree(prefix) {
      try {
        const abs = resolveKey(prefix);
        if (!dirExists(path.dirname(abs))) return;
        // Retried: another process may create a file in the tree meanwhile (a lock, a cache rewrite),
        // making the last rmdir fail ENOTEMPTY (found by the soak); fs.rm retries that and EBUSY.
        await fsp.rm(abs, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      } catch (err) {
        throw toCkptError(err, `removeTree ${prefix}`);
      }
    },

    async list(prefix) {
      const base = resolveKey(prefix, true);
      const out = await walkFiles(base, (name) => !isInternalName(name), (name) => !isInternalName(name));
      return out.map((abs) => path.relative(root, abs).split(path.sep).join('/')).sort(compareKeys);
    },

    async children(prefix) {
      try {
        // Every level a real folder: a symlink planted for a folder is FORBIDDEN, never listed through
        // (a probe planted one for a workspace's `removed` folder, and its files were read as ckpt's).
        const base = resolveKey(prefix, true);
        if (base !== root && !dirExists(base)) return [];
        const names = await fsp.readdir(base);
        return names.filter((n) => !isInternalName(n)).sort(compareKeys);
      } catch (err) {
        if (isMissing(err)) return [];
        throw toCkptError(err, `children ${prefix}`);
      }
    },

    withLock(key, fn, lockOptions) {
      let abs: string;
      try {
        abs = resolveKey(key);
      } catch (err) {
        return Promise.reject(toCkptError(err, `lock ${key}`));
      }
      // The folder walk only before a lock file is made: a lingering lock reused makes nothing, and
      // the writes under it walk their own folders (append's dirExists, write's ensureDir).
      const beforeCreate = (): void => {
        try {
          ensureDir(path.dirname(abs));
        } catch (err) {
          throw toCkptError(err, `lock ${key}`);
        }
      };
      return withFsLock(abs, key, fn, { ...lockOptions, timeoutMs: lockOptions?.timeoutMs ?? defaultTimeoutMs }, staleMs, beforeCreate);
    },

    close: () => releaseLingeringLocks(root + path.sep),
  };
}

/** A log opened for appending: its descriptor, its size then, and the file it is (device and inode). */
interface OpenLog {
  fd: number;
  size: number;
  dev: number;
  ino: number;
}

/** Not on Windows: a file's index there is 64 bits, its `ino` a double, and an open file may block its removal. */
const KEEP_LOGS = process.platform !== 'win32';

/**
 * Log descriptors kept open under a lease (StoreBackend.withLock), by path: a capture and its settle
 * in one process (a daemon's hook calls, an in-process agent loop), or the daemon's next hook call,
 * append to the same log while the lock lingers, and each append walked the log's folders (an lstat
 * per level), opened, fstat-ed and closed it. Closed when the lease ends (the lock released or lost:
 * fs-lock.ts onLeaseEnd), so none outlives the lock. The lease only bounds how long one is kept: what
 * a kept descriptor writes to is checked on every use — the path must still name the same file
 * (device and inode), else it is closed and the path opened afresh, as without it (a log removed and
 * made again, or replaced, by anyone). Appends are O_APPEND: the bytes go to the file's end wherever
 * other writers left it, as through a fresh open; each is fsynced as before.
 */
const keptLogs = {
  byLease: new WeakMap<object, Map<string, OpenLog>>(),
  /** The log kept under `lease` for `abs`, its size now; undefined (and closed) when the path names another file. */
  take(lease: object, abs: string): OpenLog | undefined {
    const logs = this.byLease.get(lease);
    const kept = logs?.get(abs);
    if (!kept) return undefined;
    logs!.delete(abs); // given back by keep after a successful append
    const st = fs.lstatSync(abs, { throwIfNoEntry: false });
    if (st?.isFile() && st.dev === kept.dev && st.ino === kept.ino) return { ...kept, size: st.size };
    closeQuietly(kept.fd);
    return undefined;
  },
  /** Keeps `log` open under `lease`; false when the lease has ended (the caller closes it). */
  keep(lease: object, abs: string, log: OpenLog): boolean {
    if (!leaseHeld(lease)) return false;
    let logs = this.byLease.get(lease);
    if (!logs) {
      const made = new Map<string, OpenLog>();
      onLeaseEnd(lease, () => closeAll(made));
      this.byLease.set(lease, (logs = made));
    }
    const had = logs.get(abs);
    if (had && had.fd !== log.fd) closeQuietly(had.fd);
    logs.set(abs, log);
    return true;
  },
};

function closeAll(logs: Map<string, OpenLog>): void {
  for (const { fd } of logs.values()) closeQuietly(fd);
  logs.clear();
}

/** Opens for writing without following a symlink (fd, size and identity); a symlinked or non-regular target is refused as a corrupt log. */
function openForWrite(abs: string, key: string, flags: number): OpenLog {
  let fd: number;
  try {
    // O_NONBLOCK: opening a planted FIFO must fail (ENXIO) rather than hang.
    fd = fs.openSync(abs, flags | C.O_NOFOLLOW | C.O_NONBLOCK, STORE_FILE_MODE);
  } catch (err) {
    if (errnoOf(err) === 'ELOOP') throw new CkptError('LOG_CORRUPT', `refusing symlinked log ${key}`, { key });
    if (errnoOf(err) === 'ENXIO' || errnoOf(err) === 'EISDIR') {
      throw new CkptError('LOG_CORRUPT', `refusing non-regular log ${key}`, { key });
    }
    throw err;
  }
  let st: fs.Stats | undefined;
  try {
    st = fs.fstatSync(fd);
  } finally {
    if (!st?.isFile()) closeQuietly(fd);
  }
  if (!st.isFile()) throw new CkptError('LOG_CORRUPT', `refusing non-regular log ${key}`, { key });
  return { fd, size: st.size, dev: st.dev, ino: st.ino };
}
