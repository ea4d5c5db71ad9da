// Cross-process locks of the filesystem driver: an in-process queue (fair, no disk polling) in
// front of proper-lockfile's lock, with stale-lock takeover after a holder was SIGKILLed and
// detection of nested locking (which would deadlock). The lock is a file made with O_EXCL rather
// than proper-lockfile's folder: same atomicity on a local disk, a fraction of the cost (below). It
// names its holder, so a lock whose holder died is taken over at once (holderGone).
import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, constants as C, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, readSync, renameSync, rmdirSync, statSync, unlinkSync, utimesSync, writeSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import lockfile from 'proper-lockfile';
import { CkptError, toCkptError } from '../../errors.js';
import { pidGone } from '../../process-alive.js';
import type { LockOptions } from '../backend.js';
import { LOCK_SUFFIX } from '../store-key.js';
import { errnoOf, tempBeside } from './fs-io.js';

/** Locks live at `<key>.ckpt-lock`; hidden from `children` and reserved in keys. */
export { LOCK_SUFFIX };

/** Lock paths held by the current async context: a nested withLock on one of them would wait forever. */
const heldHere = new AsyncLocalStorage<ReadonlySet<string>>();
/**
 * Whether withLock tracks the context (the nested-lock check). Before Node 24 an AsyncLocalStorage
 * runs on async hooks, which once enabled cost every promise of the process — ~18% of a capture
 * (1.6 → 2.0 ms median, paired); Node 24's context frames make it cheap. Elsewhere the check runs
 * under the tests (VITEST, inherited by the processes they start) or with CKPT_DEBUG_LOCKS=1; a
 * nested lock it would have reported as INTERNAL then fails as LOCKED at its timeout.
 */
const CHECK_NESTING = Number(process.versions.node.split('.')[0]) >= 24 || process.env.VITEST !== undefined || process.env.CKPT_DEBUG_LOCKS === '1';
/** Per lock path, the tail of the in-process queue: callers in one process line up here before the file lock. */
const queues = new Map<string, Promise<void>>();

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Callback<T = void> = (err: NodeJS.ErrnoException | null, value?: T) => void;

/** Runs a sync call in proper-lockfile's callback style (it then completes without a thread-pool hop). */
function direct<T>(cb: Callback<T>, call: () => T): void {
  let value: T;
  try {
    value = call();
  } catch (err) {
    cb(err as NodeJS.ErrnoException);
    return;
  }
  cb(null, value);
}

/**
 * The lock files this process created and holds, by path: what identifies each (inode and birth
 * time). A holder that stalled past the stale limit has had its lock taken over by another process
 * (which removed it and made its own); its release must not remove the new holder's file. Without
 * this check the window was the stall itself, plus the event-loop turn of a deferred release. (A
 * takeover's file may reuse the inode number, but it is born at least the stale limit later.)
 */
const ownLocks = new Map<string, { ino: number; birthtimeMs: number }>();

const identity = (st: Stats): { ino: number; birthtimeMs: number } => ({ ino: st.ino, birthtimeMs: st.birthtimeMs });

/** The lock file proper-lockfile last stat'ed, by path: what its stale takeover right after examined. */
const examined = new Map<string, { ino: number; birthtimeMs: number }>();

/**
 * What a lock file says of its holder: `<pid> <boot id> <pid namespace>` (Linux; elsewhere nothing).
 * A pid means this process only on the same boot and in the same pid namespace (a container sharing
 * the store sees other pids), so a waiter trusts it only when both match its own.
 */
let holderScope: string | null | undefined;
function ownHolderScope(): string | undefined {
  if (holderScope === undefined) {
    try {
      holderScope = `${readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim()} ${readlinkSync('/proc/self/ns/pid')}`;
    } catch {
      holderScope = null;
    }
  }
  return holderScope ?? undefined;
}

function createLockFile(p: string): void {
  // Private like every store file (issue 27): a lock file names nothing secret, but no store file is readable by others.
  const fd = openSync(p, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    const scope = ownHolderScope();
    // One small write, no flush: a waiter reading it before it lands (or after a crash lost it) finds
    // no holder named and waits for the stale limit, as before.
    if (scope) writeSync(fd, `${process.pid} ${scope}\n`);
    ownLocks.set(p, identity(fstatSync(fd)));
  } finally {
    closeSync(fd);
  }
}

/**
 * A lock that names a holder of this boot and pid namespace which no longer runs (a daemon SIGKILLed
 * while its session lock lingered made the next hook wait out the 3 s stale limit) is removed at
 * once, as a stale takeover would remove it — only while the file there is still the one read (ino
 * and birth time: a faster waiter may have taken the lock since). True when it was removed.
 */
function holderGone(p: string): boolean {
  const scope = ownHolderScope();
  if (!scope) return false;
  let fd: number;
  try {
    fd = openSync(p, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK); // a planted FIFO must not block the open
  } catch {
    return false;
  }
  try {
    const st = fstatSync(fd);
    // Without a birth time a file made since could not be told from the one read: no takeover.
    if (!st.isFile() || !(st.birthtimeMs > 0) || st.size > 256) return false;
    const buf = Buffer.alloc(st.size);
    const text = buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0));
    const m = /^([1-9][0-9]{0,9}) (.+)\n$/.exec(text);
    if (!m || m[2] !== scope) return false;
    const pid = Number(m[1]);
    if (pid === process.pid || !pidGone(pid)) return false;
    return removeIfStill(p, identity(st));
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * Takes away the lock at `p` only if it is still the one `seen` identifies (a takeover's: the lock it
 * examined). Compared and then unlinked, a lock made between the two went instead — two waiters
 * taking over one dead lock, the second's unlink removing the first's new lock, and both holding it.
 * So it is moved aside first (rename: atomic), then compared: the examined lock is deleted; another
 * one, moved by mistake, is linked back under its name (the same inode: its holder's checks still
 * pass; a link never replaces a lock made meanwhile). The aside name is a store temp name, which
 * leftover cleanup removes should a crash leave it. True when the examined lock was removed.
 */
export function removeIfStill(p: string, seen: { ino: number; birthtimeMs: number }): boolean {
  const aside = tempBeside(p);
  try {
    renameSync(p, aside);
  } catch {
    return false; // gone already (another waiter took it)
  }
  const st = lstatSync(aside, { throwIfNoEntry: false });
  const same = st !== undefined && st.ino === seen.ino && st.birthtimeMs === seen.birthtimeMs;
  if (!same && st?.isFile()) {
    try {
      linkSync(aside, p);
    } catch {
      // A lock made meanwhile stands there: the one moved is its holder's loss, found at its next update.
    }
  } else if (!same && st?.isDirectory()) {
    try {
      renameSync(aside, p); // an older ckpt's folder lock (no links to folders)
      return false;
    } catch {
      // as above
    }
  }
  if (st?.isDirectory()) rmdirSync(aside);
  else unlinkSync(aside);
  return same;
}

/**
 * Removes a lock: a file, or the folder an older ckpt (proper-lockfile's own mkdir lock) left behind.
 * Our own lock is removed only while the file there is still the one we created (see ownLocks); a
 * stale lock of another holder (a takeover) is removed whatever it is. The entry goes at the first
 * attempt either way, so one left by a lock lost while held costs a later takeover one retry.
 */
function removeLockPath(p: string): void {
  const mine = ownLocks.get(p);
  ownLocks.delete(p);
  if (mine) {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.ino !== mine.ino || st.birthtimeMs !== mine.birthtimeMs) return; // taken over: no longer ours to remove
  } else {
    // A stale takeover: proper-lockfile stat'ed the lock (lockFs.stat), found it stale, and removes
    // it now — only that very lock, not one another waiter made since.
    const seen = examined.get(p);
    examined.delete(p);
    if (seen) {
      removeIfStill(p, seen);
      return;
    }
  }
  try {
    unlinkSync(p);
  } catch (err) {
    const code = errnoOf(err);
    if (code !== 'EISDIR' && code !== 'EPERM') throw err;
    rmdirSync(p);
  }
}

/**
 * Removes this process's own lock file, nothing else: what runs at exit — proper-lockfile's handler
 * for the locks it holds (`rmdirSync`) and ours for lingering ones — where both reach the same lock.
 * The second found no entry and removed whatever was there: the lock another process had made in
 * between (8 processes capturing at once: one found its fresh lock gone, `ENOENT … stat`, 1 run in
 * 30 under load; had the removal come after that check, two processes would have held the session).
 */
function removeOwnLockPath(p: string): void {
  if (ownLocks.has(p)) removeLockPath(p);
}

/**
 * The file system proper-lockfile sees (its documented `fs` option): "mkdir" makes the lock as a
 * file with O_CREAT|O_EXCL (naming its holder), "rmdir" unlinks it. On ext4 a folder's rmdir frees a data block
 * and costs ~0.1–0.4 ms, an empty file's unlink a tenth of that; this is on every write to a session.
 * Mutual exclusion holds with an older ckpt's folder locks too: each creation fails on the other
 * (EEXIST). One object for the process, so proper-lockfile's mtime-precision probe (a utimes and a
 * stat) runs once instead of on every lock; its calls complete synchronously.
 */
const lockFs = {
  mkdir: (p: string, cb: Callback) => direct(cb, () => createLockFile(p)),
  rmdir: (p: string, cb: Callback) => direct(cb, () => removeLockPath(p)),
  rmdirSync: removeOwnLockPath,
  stat: (p: string, cb: Callback<Stats>) =>
    direct(cb, () => {
      const st = statSync(p);
      examined.set(p, identity(st));
      return st;
    }),
  utimes: (p: string, atime: Date, mtime: Date, cb: Callback) => direct(cb, () => utimesSync(p, atime, mtime)),
  realpath: (p: string, cb: Callback<string>) => cb(null, p),
};

/** A lock this process holds: its release, whether it was lost (taken over as stale), when it was taken. */
interface Held {
  release: () => Promise<void>;
  state: { compromised?: Error };
  since: number;
  /** The last linger of it (a new object each time): only that linger's idle timer may release it. */
  idle?: object;
}

/**
 * What ends with a lease (the held lock, while it is kept without a break): run once when its lock is
 * released or lost. fs-backend.ts keeps a log's descriptor open under a lease and closes it here.
 */
const leaseEnds = new WeakMap<object, (() => void)[]>();
/** Leases that have ended: nothing is kept under one of them any more. */
const endedLeases = new WeakSet<object>();

/** Whether `lease` is the lease of a lock this process still holds (withFsLock's, not ended). */
export function leaseHeld(lease: object): boolean {
  return leaseEnds.has(lease) && !endedLeases.has(lease);
}

/** Runs `fn` when `lease` ends; false (and `fn` not kept) when it is no lease of a lock still held. */
export function onLeaseEnd(lease: object, fn: () => void): boolean {
  const fns = leaseEnds.get(lease);
  if (!fns || endedLeases.has(lease)) return false;
  fns.push(fn);
  return true;
}

function endLease(held: Held): void {
  if (endedLeases.has(held)) return;
  endedLeases.add(held);
  const fns = leaseEnds.get(held) ?? [];
  leaseEnds.delete(held);
  for (const fn of fns) {
    try {
      fn();
    } catch {
      // what ends with it is best effort (a descriptor's close)
    }
  }
}

/** Releases a held lock, ending its lease first. */
function letGo(held: Held): Promise<void> {
  endLease(held);
  return held.release();
}

/**
 * Locks kept past their withLock (`LockOptions.linger`), by path: the next caller in this process
 * takes one as it is. Each is released once unused for its idle time; a use `maxMs` after the lock
 * was taken releases it at its end (another process waiting for it is not starved by a busy daemon).
 */
const lingering = new Map<string, Held>();
let exitHook: (() => void) | undefined;

/** Whether the lock file at `p` is the one this process made (not taken over by another holder). */
function stillOurs(p: string): boolean {
  const mine = ownLocks.get(p);
  const st = mine && lstatSync(p, { throwIfNoEntry: false });
  return st !== undefined && st.ino === mine!.ino && st.birthtimeMs === mine!.birthtimeMs;
}

function linger(abs: string, held: Held, idleMs: number): void {
  // A process that exits without closing its store leaves no lock a later process would wait out.
  if (!exitHook) {
    exitHook = () => {
      for (const a of lingering.keys()) {
        try {
          removeOwnLockPath(a + LOCK_SUFFIX);
        } catch {
          // gone already
        }
      }
    };
    process.once('exit', exitHook);
  }
  lingering.set(abs, held);
  // A reused lock lingers again as the same `held`: without its own mark, the timer of an earlier
  // linger released it idleMs after that one (a capture's lock was gone before its settle's next use).
  const idle = (held.idle = {});
  setTimeout(() => {
    if (lingering.get(abs) !== held || held.idle !== idle) return; // taken again meanwhile: that use decides
    lingering.delete(abs);
    void letGo(held).catch(() => {});
  }, idleMs).unref();
}

/** Releases now the lingering locks of this process under `prefix` (a store closing). */
export function releaseLingeringLocks(prefix: string): Promise<void> {
  const mine = [...lingering].filter(([abs]) => abs.startsWith(prefix));
  for (const [abs] of mine) lingering.delete(abs);
  return Promise.all(mine.map(([, h]) => letGo(h).catch(() => {}))).then(() => {});
}

/**
 * Runs `fn` holding `<abs>.ckpt-lock`. In one process callers queue in memory first (fair, no disk
 * polling); across processes the lock file is polled with jittered backoff until the
 * deadline. A holder refreshes the lock's mtime every `stale/3`; a lock not refreshed for `staleMs`
 * (its holder was SIGKILLed) is taken over. Nested withLock on the same key within one async context
 * is a bug (it would deadlock) and throws INTERNAL.
 */
export async function withFsLock<T>(
  abs: string,
  key: string,
  fn: (lease: object) => Promise<T>,
  opts: LockOptions & { timeoutMs: number },
  staleMs: number,
  beforeCreate?: () => void,
): Promise<T> {
  const inContext = CHECK_NESTING ? heldHere.getStore() : undefined;
  if (inContext?.has(abs)) throw new CkptError('INTERNAL', `nested withLock on ${key} would deadlock`, { key });
  const deadline = Date.now() + opts.timeoutMs;
  const locked = (): CkptError =>
    new CkptError('LOCKED', `lock ${key} not acquired within ${opts.timeoutMs} ms`, { key, timeoutMs: opts.timeoutMs });

  // In-process queue: our slot resolves when we are done (or give up), letting the next caller in.
  const prev = queues.get(abs);
  let leave!: () => void;
  const mine = new Promise<void>((r) => (leave = r));
  const tail = prev ? prev.then(() => mine) : mine;
  queues.set(abs, tail);
  const leaveQueue = (): void => {
    leave();
    if (queues.get(abs) === tail) queues.delete(abs);
  };
  try {
    if (prev) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), opts.timeoutMs)));
      const turn = await Promise.race([prev.then(() => 'go' as const), timedOut]);
      clearTimeout(timer);
      if (turn === 'timeout') throw locked();
    }

    // A lock this process kept after its last use (`linger`) is taken as it is — no file made or
    // removed — while its file is still the one made for it (else it was taken over: let go of it).
    const kept = lingering.get(abs);
    if (kept) lingering.delete(abs);
    const reuse = kept !== undefined && !kept.state.compromised && stillOurs(abs + LOCK_SUFFIX);
    if (kept && !reuse) await letGo(kept).catch(() => {});
    const held: Held = reuse ? kept : { release: undefined!, state: {}, since: Date.now() };
    if (!held.release) beforeCreate?.();
    for (let attempt = 0; !held.release; attempt++) {
      try {
        // Direct calls, not the thread pool (see fs-io.ts, lockFs): taking a free lock is an open
        // and a stat. The lock's folder is made only when missing (ENOENT below), not checked on every call.
        held.release = await lockfile.lock(abs, {
          fs: lockFs,
          realpath: false,
          lockfilePath: abs + LOCK_SUFFIX,
          stale: staleMs,
          update: Math.max(1_000, Math.floor(staleMs / 3)),
          retries: 0,
          // Never crash the process: remember it and fail the caller once fn is done.
          onCompromised: (err) => {
            held.state.compromised = err;
          },
        });
      } catch (err) {
        if (errnoOf(err) === 'ENOENT' && attempt === 0) {
          try {
            mkdirSync(path.dirname(abs), { recursive: true, mode: 0o700 });
          } catch (e) {
            throw toCkptError(e, `lock ${key}`);
          }
          continue;
        }
        if (errnoOf(err) !== 'ELOCKED') throw toCkptError(err, `lock ${key}`);
        if (holderGone(abs + LOCK_SUFFIX)) continue;
        const wait = Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random());
        if (Date.now() + wait > deadline) throw locked();
        await sleep(wait);
      }
    }
    if (!leaseEnds.has(held)) leaseEnds.set(held, []);
    let done = false;
    try {
      // `held` is the lease (StoreBackend.withLock): the same object while a lingering lock is reused.
      const result = CHECK_NESTING ? await heldHere.run(new Set([...(inContext ?? []), abs]), () => fn(held)) : await fn(held);
      const { compromised } = held.state;
      if (compromised) {
        throw new CkptError('LOCKED', `lock ${key} was lost while held: ${compromised.message}`, { key, compromised: true });
      }
      done = true;
      return result;
    } finally {
      // Released or taken over already when it fails: nothing of ours is left to undo. A use that
      // failed does not linger (a writer refused because its session was removed leaves no lock).
      if (!held.state.compromised) {
        if (done && opts.linger && Date.now() - held.since < opts.linger.maxMs) linger(abs, held, opts.linger.idleMs);
        else await letGo(held).catch(() => {});
      } else endLease(held);
    }
  } finally {
    leaveQueue();
  }
}
