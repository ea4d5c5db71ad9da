// The filesystem driver's leftovers and quarantine: temp files of interrupted atomic writes
// (`.<name>.ckpt-tmp-<hex>` beside their target) and objects GC took out of their names
// (`.<name>.ckpt-tmp-gc-<hex>`), found by a walk of the store folder and removed by age.
import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { CkptError, toCkptError } from '../../errors.js';
import type { Leftover, Quarantined } from '../backend.js';
import { LOCK_SUFFIX } from './fs-lock.js';
import { walkFiles } from './fs-walk.js';
import { TEMP_MARK } from '../store-key.js';

/** Temp files this driver creates carry this marker; listings skip them and object keys may not use it. */
export { TEMP_MARK };
const QUARANTINE_MARK = `${TEMP_MARK}gc-`;

const errnoOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;
const isMissing = (err: unknown): boolean => errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR';

export interface FsLeftovers {
  quarantine(key: string): Promise<Quarantined | undefined>;
  release(quarantineKey: string, key: string): Promise<void>;
  leftovers(): Promise<Leftover[]>;
  removeLeftover(key: string, cutoffMs: number): Promise<number>;
}

/** `resolveKey` validates object keys (the driver's own); leftover names are validated here. */
export function createFsLeftovers(root: string, resolveKey: (key: string) => string): FsLeftovers {
  const toKey = (abs: string): string => path.relative(root, abs).split(path.sep).join('/');

  /** A leftover name: a valid folder key plus a last segment carrying the temp marker. */
  function resolveLeftover(key: string): string {
    const slash = key.lastIndexOf('/');
    const name = key.slice(slash + 1);
    if (!name.startsWith('.') || !name.includes(TEMP_MARK) || name.includes('/') || name.includes('\\')) {
      throw new CkptError('INVALID_ARGUMENT', `not a leftover of this store: ${JSON.stringify(key)}`, { key });
    }
    return path.join(slash < 0 ? root : resolveKey(key.slice(0, slash)), name);
  }

  function quarantineOf(key: string): string | undefined {
    const slash = key.lastIndexOf('/');
    const name = key.slice(slash + 1);
    const at = name.indexOf(QUARANTINE_MARK);
    if (!name.startsWith('.') || at < 0) return undefined;
    return `${key.slice(0, slash + 1)}${name.slice(1, at)}`;
  }

  return {
    async quarantine(key) {
      const abs = resolveKey(key);
      const q = path.join(path.dirname(abs), `.${path.basename(abs)}${QUARANTINE_MARK}${randomBytes(4).toString('hex')}`);
      try {
        await fsp.rename(abs, q);
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw toCkptError(err, `quarantine ${key}`);
      }
      try {
        const st = await fsp.lstat(q);
        return { key: toKey(q), stat: { size: st.size, mtimeMs: st.mtimeMs } };
      } catch (err) {
        throw toCkptError(err, `quarantine ${key}`);
      }
    },

    async release(quarantineKey, key) {
      const q = resolveLeftover(quarantineKey);
      const abs = resolveKey(key);
      try {
        // link, not rename: a copy a put wrote meanwhile (same content) is never replaced.
        await fsp.link(q, abs);
      } catch (err) {
        if (isMissing(err)) return; // already released or removed
        if (errnoOf(err) !== 'EEXIST') throw toCkptError(err, `release ${key}`);
      }
      await fsp.unlink(q).catch((err: unknown) => {
        if (!isMissing(err)) throw toCkptError(err, `release ${key}`);
      });
    },

    async leftovers() {
      const out: Leftover[] = [];
      for (const abs of await walkFiles(root, (name) => name.includes(TEMP_MARK), (name) => !name.endsWith(LOCK_SUFFIX))) {
        try {
          const st = await fsp.lstat(abs);
          const key = toKey(abs);
          const of = quarantineOf(key);
          out.push({ key, bytes: st.size, mtimeMs: st.mtimeMs, ...(of ? { quarantineOf: of } : {}) });
        } catch (err) {
          if (!isMissing(err)) throw toCkptError(err, `stat ${abs}`);
        }
      }
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },

    async removeLeftover(key, cutoffMs) {
      const abs = resolveLeftover(key);
      try {
        const st = await fsp.lstat(abs);
        if (!st.isFile() || st.mtimeMs >= cutoffMs) return 0;
        await fsp.unlink(abs);
        return st.size;
      } catch (err) {
        if (isMissing(err)) return 0;
        throw toCkptError(err, `remove ${key}`);
      }
    },
  };
}
