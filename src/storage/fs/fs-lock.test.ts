// The file lock against a model (fast-check): random sequences of this process's locks (released at
// once or lingering, as under a server, until released) and of another holder's actions on the lock file — taking it
// when free, taking this process's lock over (as after a stall past the stale limit), going stale,
// letting go, or taking it (or this process's over) as a holder that then died, whose lock names it
// and is taken over at once. After every step the lock file must be what the model says (absent,
// ours, or the other holder's very file), and a lock call must succeed or fail (LOCKED) as the model says,
// with the lease of the call before exactly when this process's lock lingered unbroken since.
import { spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCkptError } from '../../errors.js';
import { createFsBackend } from './fs-backend.js';
import { removeIfStill } from './fs-lock.js';

type Op =
  | { kind: 'lock'; deferred: boolean }
  | { kind: 'release' | 'foreignTake' | 'foreignTakeover' | 'foreignAge' | 'foreignDrop'; dead?: boolean };

/** foreign-dead: a fresh lock naming a holder of this boot and pid namespace that no longer runs. */
type FileState = 'none' | 'ours' | 'foreign-fresh' | 'foreign-dead' | 'foreign-stale';

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('lock' as const), deferred: fc.boolean() }),
  fc.record({ kind: fc.constantFrom('release' as const, 'foreignAge' as const, 'foreignDrop' as const) }),
  fc.record({ kind: fc.constantFrom('foreignTake' as const, 'foreignTakeover' as const), dead: fc.boolean() }),
);

/** What a lock file of a holder that died says (Linux: `<pid> <boot id> <pid namespace>`, fs-lock.ts); elsewhere nothing. */
function deadHolderText(): string {
  try {
    const scope = `${readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim()} ${readlinkSync('/proc/self/ns/pid')}`;
    return `${spawnSync('true').pid} ${scope}\n`;
  } catch {
    return '';
  }
}

describe('file lock (model-based)', () => {
  it('holds, defers, takes over stale locks and never removes another holder\'s lock, as the model says', async () => {
    const dir = await fs.mkdtemp(path.join(tmpdir(), 'ckpt-lock-model-'));
    const dead = deadHolderText();
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 12 }), async (ops) => {
          const backend = createFsBackend({ dir });
          const key = `locks/k${++run}`;
          const file = path.join(dir, `${key}.ckpt-lock`);
          await fs.mkdir(path.dirname(file), { recursive: true });
          let state: FileState = 'none';
          let lingering = false;
          let lastLease: object | undefined;
          let foreignIno: number | undefined;
          const foreignCreate = async (text: string): Promise<void> => {
            await fs.writeFile(file, text, { flag: 'wx' });
            foreignIno = (await fs.lstat(file)).ino;
          };
          for (const o of ops) {
            switch (o.kind) {
              case 'lock': {
                let inside: boolean | undefined;
                let lease: object | undefined;
                // The lease is the last one exactly when our lock lingered unbroken since (nobody else can have held it).
                const unbroken = lingering && state === 'ours';
                const result = await backend
                  .withLock(key, async (l) => {
                    inside = (await fs.lstat(file)).isFile();
                    lease = l;
                    return 'ran';
                  }, { timeoutMs: 100, ...(o.deferred ? { linger: { idleMs: 600_000, maxMs: 600_000 } } : {}) })
                  .catch((e: unknown) => (isCkptError(e, 'LOCKED') ? 'LOCKED' : Promise.reject(e)));
                if (result === 'ran') {
                  expect(lease).toBeDefined();
                  expect(lease === lastLease).toBe(unbroken);
                  lastLease = lease;
                }
                // A lingering lock taken over meanwhile is let go (never used as if still ours).
                lingering = false;
                if (state === 'foreign-fresh') {
                  expect(result).toBe('LOCKED');
                } else {
                  expect([result, inside]).toEqual(['ran', true]);
                  state = o.deferred ? 'ours' : 'none';
                  lingering = o.deferred;
                }
                break;
              }
              case 'release':
                if (!lingering) continue;
                await backend.close!();
                lingering = false;
                if (state === 'ours') state = 'none';
                break;
              case 'foreignTake':
                if (state !== 'none') continue;
                await foreignCreate(o.dead ? dead : '');
                state = o.dead && dead ? 'foreign-dead' : 'foreign-fresh';
                break;
              case 'foreignTakeover':
                // By a rename over it: a file made right after an unlink could get this lock's inode
                // number back within the same clock tick, which a takeover (seconds later) cannot.
                if (state !== 'ours') continue;
                await fs.writeFile(`${file}.other`, o.dead ? dead : '');
                await fs.rename(`${file}.other`, file);
                foreignIno = (await fs.lstat(file)).ino;
                state = o.dead && dead ? 'foreign-dead' : 'foreign-fresh';
                break;
              case 'foreignAge': {
                if (state !== 'foreign-fresh' && state !== 'foreign-dead') continue;
                const old = new Date(Date.now() - 60_000);
                await fs.utimes(file, old, old);
                state = 'foreign-stale';
                break;
              }
              case 'foreignDrop':
                if (state !== 'foreign-fresh' && state !== 'foreign-dead' && state !== 'foreign-stale') continue;
                await fs.unlink(file);
                state = 'none';
                break;
            }
            const st = await fs.lstat(file).catch(() => undefined);
            if (state === 'none') expect(st).toBeUndefined();
            else {
              expect(st?.isFile()).toBe(true);
              if (state !== 'ours') expect(st!.ino).toBe(foreignIno);
            }
          }
          await backend.close!();
        }),
        { numRuns: 40 },
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('removeIfStill (a takeover removes only the lock it examined)', () => {
  it('removes the examined lock; puts back, same inode, one that replaced it; leaves nothing aside', async () => {
    const dir = await fs.mkdtemp(path.join(tmpdir(), 'ckpt-lock-still-'));
    try {
      const p = path.join(dir, 'events.jsonl.ckpt-lock');
      const idOf = async (f: string) => {
        const st = await fs.lstat(f);
        return { ino: st.ino, birthtimeMs: st.birthtimeMs };
      };
      await fs.writeFile(p, '1 dead holder\n');
      const dead = await idOf(p);
      // Another waiter took the dead lock and made its own meanwhile: that one stays, as it was.
      await fs.rm(p);
      await fs.writeFile(p, '2 live holder\n');
      const live = await idOf(p);
      expect(removeIfStill(p, dead)).toBe(false);
      expect(await idOf(p)).toEqual(live);
      expect(await fs.readFile(p, 'utf8')).toBe('2 live holder\n');
      expect(await fs.readdir(dir)).toEqual(['events.jsonl.ckpt-lock']);
      // The examined lock itself goes; a missing one is no error.
      expect(removeIfStill(p, live)).toBe(true);
      expect(await fs.readdir(dir)).toEqual([]);
      expect(removeIfStill(p, live)).toBe(false);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
