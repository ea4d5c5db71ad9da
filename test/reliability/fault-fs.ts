// Test-only fault injection for the file system (issue 16). Loaded into a ckpt child process with
// `node --import <this file, compiled>` (see fault-harness.ts), it wraps every write operation of
// `node:fs` (callback and sync forms), `node:fs/promises` and the FileHandle prototype, then calls
// `syncBuiltinESMExports()` so that ESM named imports (`import { rename } from 'node:fs/promises'`)
// and CommonJS clones made later (graceful-fs, which proper-lockfile uses) see the wrappers.
// Production code is not changed at all: without the preload nothing here runs.
//
// Every write call on a path under the store folder counts one *store step*, under the workspace one
// *workspace step* (fd and FileHandle calls are attributed to the path they were opened on; lock
// mtime refreshes are not counted, see step()). With
// `CKPT_FAULT` = JSON {store, workspace, side?, step?, action?, report?}, the `step`-th write of
// `side` fails with `action` (ENOSPC, EIO, EACCES, EROFS: an errno error as Node makes it) or, for
// `kill`, the process SIGKILLs itself just before that write. `report` names a file that gets
// {counts, fired, trace} when the process exits normally (a counting run or an error fault).
import fs from 'node:fs';
import { constants as osConstants } from 'node:os';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';

export type FaultAction = 'ENOSPC' | 'EIO' | 'EACCES' | 'EROFS' | 'kill';
export type Side = 'store' | 'workspace';

export interface FaultConfig {
  store: string;
  workspace: string;
  side?: Side;
  step?: number;
  action?: FaultAction;
  report?: string;
}

export interface TraceEntry {
  side: Side;
  step: number;
  op: string;
  /** Path relative to the side's root. */
  path: string;
}

export interface FaultReport {
  counts: Record<Side, number>;
  fired?: TraceEntry & { action: FaultAction };
  trace: TraceEntry[];
}

const WRITE_FLAGS = fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND;

function isWriteFlags(flags: unknown): boolean {
  if (flags === undefined || flags === null) return false;
  if (typeof flags === 'number') return (flags & WRITE_FLAGS) !== 0;
  const s = String(flags);
  return s !== 'r' && s !== 'rs' && s !== 'sr';
}

function asPath(p: unknown): string | undefined {
  if (typeof p === 'string') return p;
  if (Buffer.isBuffer(p)) return p.toString('utf8');
  if (p instanceof URL) return p.protocol === 'file:' ? decodeURIComponent(p.pathname) : undefined;
  return undefined;
}

export function installFaultFs(config: FaultConfig): { report(): FaultReport } {
  const roots: [Side, string][] = [
    ['store', path.resolve(config.store)],
    ['workspace', path.resolve(config.workspace)],
  ];
  const counts: Record<Side, number> = { store: 0, workspace: 0 };
  const trace: TraceEntry[] = [];
  let fired: FaultReport['fired'];
  const fdPaths = new Map<number, string>();

  const sideOf = (p: string | undefined): [Side, string] | undefined => {
    if (p === undefined) return undefined;
    const abs = path.resolve(p);
    for (const [side, root] of roots) {
      if (abs === root || abs.startsWith(root + path.sep)) return [side, path.relative(root, abs) || '.'];
    }
    return undefined;
  };

  /** Counts one write; returns the error to fail it with (or kills the process), undefined to let it run. */
  function step(op: string, p: string | undefined): NodeJS.ErrnoException | undefined {
    const where = sideOf(p);
    if (!where) return undefined;
    // proper-lockfile refreshes a held lock's mtime on a timer: when it fires depends on the machine's
    // load, so counting it would make step k a different write from run to run. Not a step.
    if (op.endsWith('utimes') && p !== undefined && p.endsWith('.ckpt-lock')) return undefined;
    const [side, rel] = where;
    const n = ++counts[side];
    const entry = { side, step: n, op, path: rel };
    if (trace.length < 20_000) trace.push(entry);
    if (config.side !== side || config.step !== n || !config.action) return undefined;
    fired = { ...entry, action: config.action };
    if (config.action === 'kill') process.kill(process.pid, 'SIGKILL');
    const code = config.action;
    const errno = (osConstants.errno as Record<string, number>)[code] ?? 5;
    const syscall = op.replace(/^(fh\.|sync\.|cb\.)/, '').replace(/Sync$/, '');
    const err = new Error(`${code}: injected fault, ${syscall} '${p}'`) as NodeJS.ErrnoException;
    err.errno = -errno;
    err.code = code;
    err.syscall = syscall;
    if (p !== undefined) err.path = p;
    return err;
  }

  type AnyFn = (...args: unknown[]) => unknown;
  type PathOf = (args: unknown[], self: unknown) => string | undefined;
  const arg = (i: number): PathOf => (args) => asPath(args[i]);
  const fdArg: PathOf = (args) => (typeof args[0] === 'number' ? fdPaths.get(args[0]) : asPath(args[0]));
  const selfFd: PathOf = (_args, self) => fdPaths.get((self as { fd: number }).fd);

  function wrapPromise(obj: Record<string, unknown>, name: string, label: string, pathOf: PathOf, when?: (args: unknown[]) => boolean): void {
    const orig = obj[name] as AnyFn | undefined;
    if (typeof orig !== 'function') return;
    obj[name] = function (this: unknown, ...args: unknown[]) {
      if (!when || when(args)) {
        const err = step(label, pathOf(args, this));
        if (err) return Promise.reject(err);
      }
      return orig.apply(this, args);
    };
  }

  function wrapSync(obj: Record<string, unknown>, name: string, pathOf: PathOf, when?: (args: unknown[]) => boolean): void {
    const orig = obj[name] as AnyFn | undefined;
    if (typeof orig !== 'function') return;
    obj[name] = function (this: unknown, ...args: unknown[]) {
      if (!when || when(args)) {
        const err = step(name, pathOf(args, this));
        if (err) throw err;
      }
      return orig.apply(this, args);
    };
  }

  function wrapCallback(obj: Record<string, unknown>, name: string, pathOf: PathOf, when?: (args: unknown[]) => boolean): void {
    const orig = obj[name] as AnyFn | undefined;
    if (typeof orig !== 'function') return;
    const wrapped = function (this: unknown, ...args: unknown[]) {
      if (!when || when(args)) {
        const err = step(`cb.${name}`, pathOf(args, this));
        const cb = args[args.length - 1];
        if (err && typeof cb === 'function') {
          process.nextTick(cb as AnyFn, err);
          return undefined;
        }
      }
      return orig.apply(this, args);
    };
    // fs.exists-style custom promisify symbols are not involved for write calls.
    obj[name] = wrapped;
  }

  // ---- path-based write calls: the path a call writes is argument 0, or 1 for symlink/link/copyFile/cp.
  const pathCalls: [string, number][] = [
    ['writeFile', 0], ['appendFile', 0], ['rename', 1], ['unlink', 0], ['rm', 0], ['rmdir', 0], ['mkdir', 0],
    ['symlink', 1], ['link', 1], ['chmod', 0], ['lchmod', 0], ['chown', 0], ['lchown', 0], ['utimes', 0],
    ['lutimes', 0], ['truncate', 0], ['copyFile', 1], ['cp', 1], ['mkdtemp', 0],
  ];
  // rename counts by its destination unless only the source is ours (moving a file out).
  const renamePath: PathOf = (args) => (sideOf(asPath(args[1])) ? asPath(args[1]) : asPath(args[0]));
  const fdCalls = ['write', 'writev', 'fsync', 'fdatasync', 'fchmod', 'fchown', 'ftruncate', 'futimes'];

  const fsObj = fs as unknown as Record<string, unknown>;
  const promises = fs.promises as unknown as Record<string, unknown>;
  for (const [name, i] of pathCalls) {
    const pathOf = name === 'rename' ? renamePath : name === 'writeFile' || name === 'appendFile' ? fdArg : arg(i);
    wrapCallback(fsObj, name, pathOf);
    wrapSync(fsObj, `${name}Sync`, pathOf);
    wrapPromise(promises, name, name, name === 'writeFile' || name === 'appendFile' ? arg(0) : pathOf);
  }
  for (const name of fdCalls) {
    wrapCallback(fsObj, name, fdArg);
    wrapSync(fsObj, `${name}Sync`, fdArg);
  }

  // ---- opens: counted when the flags can write; the fd (or FileHandle) is remembered for later calls.
  const openFlags = (args: unknown[]): boolean => isWriteFlags(args[1]);
  const origOpen = fs.open as unknown as AnyFn;
  fsObj.open = function (this: unknown, ...args: unknown[]) {
    const p = asPath(args[0]);
    if (isWriteFlags(typeof args[1] === 'function' ? undefined : args[1])) {
      const err = step('cb.open', p);
      const cb = args[args.length - 1];
      if (err && typeof cb === 'function') {
        process.nextTick(cb as AnyFn, err);
        return undefined;
      }
    }
    const cb = args[args.length - 1];
    if (typeof cb === 'function' && p !== undefined) {
      args[args.length - 1] = (err: unknown, fd: number) => {
        if (!err) fdPaths.set(fd, p);
        (cb as AnyFn)(err, fd);
      };
    }
    return origOpen.apply(this, args);
  };
  const origOpenSync = fs.openSync as unknown as AnyFn;
  fsObj.openSync = function (this: unknown, ...args: unknown[]) {
    const p = asPath(args[0]);
    if (openFlags(args)) {
      const err = step('openSync', p);
      if (err) throw err;
    }
    const fd = origOpenSync.apply(this, args) as number;
    if (p !== undefined) fdPaths.set(fd, p);
    return fd;
  };
  const origPOpen = promises.open as AnyFn;
  promises.open = async function (this: unknown, ...args: unknown[]) {
    const p = asPath(args[0]);
    if (openFlags(args)) {
      const err = step('open', p);
      if (err) throw err;
    }
    const fh = (await origPOpen.apply(this, args)) as { fd: number };
    if (p !== undefined) fdPaths.set(fh.fd, p);
    return fh;
  };
  for (const name of ['close', 'closeSync']) {
    const orig = fsObj[name] as AnyFn;
    fsObj[name] = function (this: unknown, ...args: unknown[]) {
      if (typeof args[0] === 'number') fdPaths.delete(args[0]);
      return orig.apply(this, args);
    };
  }

  // ---- FileHandle methods: the class is not exported and no handle can be had synchronously, so its
  // prototype is patched on the first open (before that handle's first method call).
  {
    let patched = false;
    const patchHandle = (fh: object): void => {
      if (patched) return;
      patched = true;
      const proto = Object.getPrototypeOf(fh) as Record<string, unknown>;
      for (const name of ['write', 'writev', 'writeFile', 'appendFile', 'sync', 'datasync', 'chmod', 'chown', 'truncate', 'utimes']) {
        wrapPromise(proto, name, `fh.${name}`, selfFd);
      }
      const close = proto.close as AnyFn;
      proto.close = function (this: { fd: number }, ...args: unknown[]) {
        fdPaths.delete(this.fd);
        return close.apply(this, args);
      };
    };
    const innerOpen = promises.open as AnyFn;
    promises.open = async function (this: unknown, ...args: unknown[]) {
      const fh = (await innerOpen.apply(this, args)) as object;
      patchHandle(fh);
      return fh;
    };
  }
  syncBuiltinESMExports();
  return { report: () => ({ counts: { ...counts }, ...(fired ? { fired } : {}), trace }) };
}

// ---- preload entry: configured by CKPT_FAULT ------------------------------------------------------
const raw = process.env.CKPT_FAULT;
if (raw) {
  const config = JSON.parse(raw) as FaultConfig;
  const writeReport = fs.writeFileSync;
  const faults = installFaultFs(config);
  if (config.report) {
    const reportFile = config.report;
    process.on('exit', () => {
      writeReport(reportFile, JSON.stringify(faults.report()));
    });
  }
}
