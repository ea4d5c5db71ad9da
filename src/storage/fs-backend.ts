// The local-filesystem driver of StoreBackend: key validation, atomic + durable writes (temp beside
// the target, fsync, rename, directory fsync), create-if-absent for content-addressed objects,
// O_NOFOLLOW reads and appends, listing; locks live in fs-lock.ts, leftovers and quarantine in fs-leftovers.ts.
import { randomBytes } from 'node:crypto';
import { constants as C } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { CkptError, toCkptError } from '../errors.js';
import type { ObjectStat, StoreBackend } from './backend.js';
import { withFsLock } from './fs-lock.js';
import { createFsLeftovers } from './fs-leftovers.js';
import { compareKeys, isInternalName, keySegments, TEMP_MARK } from './store-key.js';
import { walkFiles } from './fs-walk.js';

export interface FsBackendOptions {
  /** The store directory; every key resolves beneath it. */
  dir: string;
  /** Default wait for `withLock` before LOCKED (10 s). */
  lockTimeoutMs?: number;
  /** A lock whose holder has not refreshed it for this long is taken over (3 s; proper-lockfile's minimum is 2 s). */
  lockStaleMs?: number;
}


const isMissing = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};
const errnoOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

export function createFsBackend(options: FsBackendOptions): StoreBackend {
  const root = path.resolve(options.dir);
  const defaultTimeoutMs = options.lockTimeoutMs ?? 10_000;
  const staleMs = Math.max(options.lockStaleMs ?? 3_000, 2_000);

  /** Resolves a key beneath the store; rejects anything that could land elsewhere or collide with driver files. */
  function resolveKey(key: string, allowRoot = false): string {
    const segments = keySegments(key, allowRoot);
    return segments.length === 0 ? root : path.join(root, ...segments);
  }

  const tempBeside = (abs: string): string =>
    path.join(path.dirname(abs), `.${path.basename(abs).slice(0, 60)}${TEMP_MARK}${randomBytes(6).toString('hex')}`);

  /** Opens a regular file without following symlinks; undefined when missing, a symlink or not regular. */
  async function openRegular(abs: string): Promise<fsp.FileHandle | undefined> {
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(abs, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
    } catch (err) {
      if (isMissing(err) || errnoOf(err) === 'ELOOP') return undefined;
      throw toCkptError(err, `open ${abs}`);
    }
    if (!(await fh.stat()).isFile()) {
      await fh.close();
      return undefined;
    }
    return fh;
  }

  async function readRange(key: string, offset: number, length: number): Promise<Buffer | undefined> {
    const abs = resolveKey(key);
    const fh = await openRegular(abs);
    if (!fh) return undefined;
    try {
      const buf = Buffer.alloc(Math.max(0, length));
      let done = 0;
      while (done < buf.length) {
        const { bytesRead } = await fh.read(buf, done, buf.length - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return buf.subarray(0, done);
    } catch (err) {
      throw toCkptError(err, `read ${key}`);
    } finally {
      await fh.close();
    }
  }

  return {
    kind: 'fs',
    ...createFsLeftovers(root, (key) => resolveKey(key)),

    async read(key) {
      const abs = resolveKey(key);
      const fh = await openRegular(abs);
      if (!fh) return undefined;
      try {
        return await fh.readFile();
      } catch (err) {
        throw toCkptError(err, `read ${key}`);
      } finally {
        await fh.close();
      }
    },

    readRange,

    async write(key, data, opts) {
      const abs = resolveKey(key);
      try {
        await ensureDir(path.dirname(abs));
        const mode = opts?.mode ?? (await existingMode(abs)) ?? 0o644;
        const tmp = tempBeside(abs);
        const durable = opts?.durable !== false;
        await writeTemp(tmp, data, mode, durable);
        try {
          await fsp.rename(tmp, abs);
        } catch (err) {
          await fsp.rm(tmp, { force: true });
          throw err;
        }
        if (durable) await fsyncDir(path.dirname(abs));
      } catch (err) {
        throw toCkptError(err, `write ${key}`);
      }
    },

    async create(key, data) {
      const abs = resolveKey(key);
      try {
        if (await freshenIfFile(abs)) return false;
        await ensureDir(path.dirname(abs));
        const tmp = tempBeside(abs);
        await writeTemp(tmp, data, 0o644);
        let created = true;
        try {
          // link() fails with EEXIST instead of replacing: exactly one concurrent creator wins.
          await fsp.link(tmp, abs);
        } catch (err) {
          if (errnoOf(err) === 'EEXIST' && (await freshenIfFile(abs))) created = false;
          // Not a regular file there (a symlink planted at an object key), or no hard links here: replace.
          else await fsp.rename(tmp, abs);
        } finally {
          // Cleanup only: the object exists under its name now, so failing to remove the temp name
          // must not fail the create (a leftover temp file is GC's, by age).
          await fsp.rm(tmp, { force: true }).catch(() => {});
        }
        if (created) await fsyncDir(path.dirname(abs));
        return created;
      } catch (err) {
        throw toCkptError(err, `create ${key}`);
      }
    },

    async append(key, data) {
      const abs = resolveKey(key);
      let fh: fsp.FileHandle | undefined;
      try {
        await ensureDir(path.dirname(abs));
        const existed = await fsp.lstat(abs).then(
          () => true,
          (err: unknown) => (isMissing(err) ? false : Promise.reject(err)),
        );
        fh = await openForWrite(abs, key, C.O_WRONLY | C.O_APPEND | C.O_CREAT);
        const before = (await fh.stat()).size;
        try {
          await writeAll(fh, data);
          await fh.sync();
        } catch (err) {
          // A failed append must not leave its bytes behind (whole or torn): the caller was told it
          // failed, so a later reader must not find the event (a journaled restore would be finished
          // by the next open although its command reported an error). Cut back to where it started.
          await fh.truncate(before).then(() => fh!.sync()).catch(() => {});
          throw err;
        }
        if (!existed) await fsyncDir(path.dirname(abs));
      } catch (err) {
        throw toCkptError(err, `append ${key}`);
      } finally {
        await fh?.close();
      }
    },

    async truncate(key, size) {
      const abs = resolveKey(key);
      let fh: fsp.FileHandle | undefined;
      try {
        fh = await openForWrite(abs, key, C.O_WRONLY);
        await fh.truncate(size);
        await fh.sync();
      } catch (err) {
        if (isMissing(err)) throw new CkptError('NOT_FOUND', `cannot truncate missing ${key}`, { key });
        throw toCkptError(err, `truncate ${key}`);
      } finally {
        await fh?.close();
      }
    },

    async stat(key): Promise<ObjectStat | undefined> {
      const abs = resolveKey(key);
      try {
        const st = await fsp.lstat(abs);
        return st.isFile() ? { size: st.size, mtimeMs: st.mtimeMs } : undefined;
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw toCkptError(err, `stat ${key}`);
      }
    },

    async touch(key) {
      try {
        await freshenIfFile(resolveKey(key));
      } catch (err) {
        throw toCkptError(err, `touch ${key}`);
      }
    },

    async remove(key) {
      try {
        await fsp.unlink(resolveKey(key));
      } catch (err) {
        if (!isMissing(err)) throw toCkptError(err, `remove ${key}`);
      }
    },

    async removeTree(prefix) {
      try {
        // Retried: another process may create a file in the tree meanwhile (a lock, a cache rewrite),
        // making the last rmdir fail ENOTEMPTY (found by the soak); fs.rm retries that and EBUSY.
        await fsp.rm(resolveKey(prefix), { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
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
        const names = await fsp.readdir(resolveKey(prefix, true));
        return names.filter((n) => !isInternalName(n)).sort(compareKeys);
      } catch (err) {
        if (isMissing(err)) return [];
        throw toCkptError(err, `children ${prefix}`);
      }
    },

    withLock(key, fn, lockOptions) {
      return withFsLock(resolveKey(key), key, fn, { ...lockOptions, timeoutMs: lockOptions?.timeoutMs ?? defaultTimeoutMs }, staleMs);
    },
  };
}

// ---- file helpers -------------------------------------------------------------------------------

async function writeAll(fh: fsp.FileHandle, data: Uint8Array): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done);
    done += bytesWritten;
  }
}

/** Writes a fresh temp file with `mode` (set explicitly: the umask must not change it) and fsyncs it; removed on failure. */
async function writeTemp(tmp: string, data: Uint8Array, mode: number, sync = true): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
    await fh.chmod(mode);
    await writeAll(fh, data);
    if (sync) await fh.sync();
    await fh.close();
    fh = undefined;
  } catch (err) {
    await fh?.close().catch(() => {});
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

/** Opens for writing without following a symlink; a symlinked or non-regular target is refused as a corrupt log. */
async function openForWrite(abs: string, key: string, flags: number): Promise<fsp.FileHandle> {
  let fh: fsp.FileHandle;
  try {
    // O_NONBLOCK: opening a planted FIFO must fail (ENXIO) rather than hang.
    fh = await fsp.open(abs, flags | C.O_NOFOLLOW | C.O_NONBLOCK, 0o644);
  } catch (err) {
    if (errnoOf(err) === 'ELOOP') throw new CkptError('LOG_CORRUPT', `refusing symlinked log ${key}`, { key });
    if (errnoOf(err) === 'ENXIO' || errnoOf(err) === 'EISDIR') {
      throw new CkptError('LOG_CORRUPT', `refusing non-regular log ${key}`, { key });
    }
    throw err;
  }
  if (!(await fh.stat()).isFile()) {
    await fh.close();
    throw new CkptError('LOG_CORRUPT', `refusing non-regular log ${key}`, { key });
  }
  return fh;
}

async function existingMode(abs: string): Promise<number | undefined> {
  try {
    const st = await fsp.lstat(abs);
    return st.isFile() ? st.mode & 0o7777 : undefined;
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/** Sets the mtime of a regular file to now; false when missing or not a regular file. */
async function freshenIfFile(abs: string): Promise<boolean> {
  try {
    if (!(await fsp.lstat(abs)).isFile()) return false;
    const now = new Date();
    await fsp.utimes(abs, now, now);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, C.O_RDONLY);
  try {
    await fh.sync();
  } catch (err) {
    // Some filesystems refuse fsync on directories; the rename itself has happened.
    if (errnoOf(err) !== 'EINVAL' && errnoOf(err) !== 'EISDIR') throw err;
  } finally {
    await fh.close();
  }
}

/** mkdir -p (the store folder itself included) that fsyncs the parent of every folder it creates. */
async function ensureDir(dir: string): Promise<void> {
  try {
    await fsp.mkdir(dir);
  } catch (err) {
    if (errnoOf(err) === 'EEXIST') return;
    if (errnoOf(err) !== 'ENOENT' || dir === path.dirname(dir)) throw err;
    await ensureDir(path.dirname(dir));
    try {
      await fsp.mkdir(dir);
    } catch (again) {
      if (errnoOf(again) === 'EEXIST') return;
      throw again;
    }
  }
  await fsyncDir(path.dirname(dir));
}
