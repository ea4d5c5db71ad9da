// Test-only seam around a restore's flush at once (DESIGN §10 "A large restore flushes its file
// system once"), preloaded into a ckpt child with `node --import` like fault-fs.ts, whose counting
// trace it installs and extends. Configured by CKPT_FLUSH_SEAM = JSON FlushSeamConfig:
// - `pending`: the bytes /proc/meminfo reports waiting for write-back (Dirty), so that the choice
//   between one flush and an fsync per file does not depend on what the machine's other processes
//   left dirty (0: at once whenever syncfs is usable; a huge number: an fsync per file);
// - `sync: 'fail'`: the `sync -f` process is not run and reported failed (exit 1), as a write-back
//   error would be: the restore must then fsync each written file by its path (place.ts fsyncWritten);
// - `swap`: run just before `sync -f` would start — after every file is placed, before any flush —
//   the window in which a written file or its folder can be replaced by a symlink: each `path` is
//   moved aside to `<path>.moved` and replaced by a symlink to `target`; done with the unwrapped
//   calls, so the trace holds ckpt's calls only;
// - `outside`: paths whose inodes ckpt must never open; an open that lands on one is recorded;
// - `slowFileSync`: each FileHandle fsync of a file (not a folder) returns this many ms late, so that
//   a commit that does not wait for the fallback's fsyncs shows in the order of the events.
// The report (at `fault.report`) is fault-fs's {counts, trace} plus `events`, in the order they
// happened, each with the trace's length at that moment (`at`): the sync process's start and exit,
// the write of the `restore_committed` event, each fsync's return (`fsync-done`), an open of an
// outside inode (`opened-outside`). Production code is not changed: without the preload nothing runs.
import childProcess from 'node:child_process';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { installFaultFs, type FaultConfig, type FaultReport } from './fault-fs.js';

export interface FlushSeamConfig {
  fault: FaultConfig;
  pending?: number;
  sync?: 'fail';
  swap?: { path: string; target: string }[];
  outside?: string[];
  slowFileSync?: number;
}

export interface SeamEvent {
  kind: 'sync-start' | 'sync-exit' | 'committed' | 'fsync-done' | 'opened-outside' | 'swapped';
  /** The fault trace's length when it happened: trace entries before `at` came before it. */
  at: number;
  ok?: boolean;
  path?: string;
}

export interface FlushSeamReport extends FaultReport {
  events: SeamEvent[];
}

type AnyFn = (...args: unknown[]) => unknown;

function install(config: FlushSeamConfig): () => FlushSeamReport {
  // The unwrapped calls, for the swap and the report (taken before fault-fs wraps them).
  const raw = { renameSync: fs.renameSync, symlinkSync: fs.symlinkSync, fstatSync: fs.fstatSync, statSync: fs.statSync };
  const faults = installFaultFs(config.fault);
  const events: SeamEvent[] = [];
  const mark = (e: Omit<SeamEvent, 'at'>): void => void events.push({ ...e, at: faults.report().trace.length });
  const fsObj = fs as unknown as Record<string, unknown>;
  const promises = fs.promises as unknown as Record<string, unknown>;
  const cp = childProcess as unknown as Record<string, unknown>;
  const ws = path.resolve(config.fault.workspace);

  // ---- what /proc/meminfo says waits for write-back
  if (config.pending !== undefined) {
    const kb = Math.ceil(config.pending / 1024);
    const orig = fs.readFileSync as unknown as AnyFn;
    fsObj.readFileSync = function (this: unknown, ...args: unknown[]) {
      if (args[0] === '/proc/meminfo') {
        const text = `MemTotal: 1000000 kB\nDirty: ${kb} kB\nWriteback: 0 kB\n`;
        return args[1] === undefined ? Buffer.from(text, 'latin1') : text;
      }
      return orig.apply(this, args);
    };
  }

  // ---- the sync process
  const origExecFile = childProcess.execFile as unknown as AnyFn;
  cp.execFile = function (this: unknown, ...args: unknown[]) {
    const file = String(args[0]);
    if (!/\/sync$/.test(file)) return origExecFile.apply(this, args);
    const cb = args[args.length - 1] as AnyFn;
    mark({ kind: 'sync-start' });
    if (config.swap) {
      for (const { path: rel, target } of config.swap) {
        raw.renameSync(path.join(ws, rel), path.join(ws, `${rel}.moved`));
        raw.symlinkSync(target, path.join(ws, rel));
        mark({ kind: 'swapped', path: rel });
      }
    }
    if (config.sync === 'fail') {
      const err = Object.assign(new Error('Command failed: sync (seam)'), { code: 1 });
      setTimeout(() => {
        mark({ kind: 'sync-exit', ok: false });
        cb(err, '', '');
      }, 5);
      return undefined;
    }
    args[args.length - 1] = (err: unknown, ...rest: unknown[]) => {
      mark({ kind: 'sync-exit', ok: err === null });
      cb(err, ...rest);
    };
    return origExecFile.apply(this, args);
  };

  // ---- the restore_committed event, as the log append writes it
  const origWriteSync = fs.writeSync as unknown as AnyFn;
  fsObj.writeSync = function (this: unknown, ...args: unknown[]) {
    const data = args[1];
    if ((Buffer.isBuffer(data) || typeof data === 'string') && data.includes('"type":"restore_committed"')) mark({ kind: 'committed' });
    return origWriteSync.apply(this, args);
  };

  // ---- opens that land on an outside inode; the return of each FileHandle sync
  const outside = new Set(
    (config.outside ?? []).map((p) => {
      const s = raw.statSync(p);
      return `${s.dev}:${s.ino}`;
    }),
  );
  const check = (fd: number, p: unknown): void => {
    const s = raw.fstatSync(fd);
    if (outside.has(`${s.dev}:${s.ino}`)) mark({ kind: 'opened-outside', path: String(p) });
  };
  const origOpenSync = fs.openSync as unknown as AnyFn;
  fsObj.openSync = function (this: unknown, ...args: unknown[]) {
    const fd = origOpenSync.apply(this, args) as number;
    check(fd, args[0]);
    return fd;
  };
  const origOpen = fs.open as unknown as AnyFn;
  fsObj.open = function (this: unknown, ...args: unknown[]) {
    const cb = args[args.length - 1];
    if (typeof cb === 'function') {
      args[args.length - 1] = (err: unknown, fd: number) => {
        if (!err) check(fd, args[0]);
        (cb as AnyFn)(err, fd);
      };
    }
    return origOpen.apply(this, args);
  };
  let patched = false;
  const handlePaths = new Map<number, string>();
  const origPOpen = promises.open as AnyFn;
  promises.open = async function (this: unknown, ...args: unknown[]) {
    const fh = (await origPOpen.apply(this, args)) as { fd: number };
    check(fh.fd, args[0]);
    handlePaths.set(fh.fd, path.relative(ws, path.resolve(String(args[0]))));
    if (!patched) {
      // fault-fs patched the prototype on this same open (inner): wrapped once more, outside it.
      patched = true;
      const proto = Object.getPrototypeOf(fh) as Record<string, unknown>;
      const sync = proto.sync as AnyFn;
      proto.sync = async function (this: { fd: number }, ...a: unknown[]) {
        const rel = handlePaths.get(this.fd);
        const r = await sync.apply(this, a);
        if (config.slowFileSync && raw.fstatSync(this.fd).isFile()) await new Promise((resolve) => setTimeout(resolve, config.slowFileSync));
        mark({ kind: 'fsync-done', path: rel });
        return r;
      };
    }
    return fh;
  };
  syncBuiltinESMExports();
  return () => ({ ...faults.report(), events });
}

// ---- preload entry: configured by CKPT_FLUSH_SEAM --------------------------------------------------
const seamRaw = process.env.CKPT_FLUSH_SEAM;
if (seamRaw) {
  const config = JSON.parse(seamRaw) as FlushSeamConfig;
  const writeReport = fs.writeFileSync;
  const report = install(config);
  if (config.fault.report) {
    const reportFile = config.fault.report;
    process.on('exit', () => writeReport(reportFile, JSON.stringify(report())));
  }
}
