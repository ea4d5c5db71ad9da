// A restore that writes many files flushes the workspace's file system once (syncfs through
// `sync -f`, src/restore/sync-fs.ts) instead of fsyncing each file and folder; when much other data
// waits for write-back, or a folder it touched lies on another file system (something mounted inside
// the workspace), it flushes file by file as before. Real CLI processes; which fsyncs ran is read from the fault seam's trace of every
// write call (test/reliability/fault-fs.ts, counting only), and the mount is a real tmpfs in a
// private mount namespace (root and unshare).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/index.js';
import { canSyncFileSystem } from '../src/restore/sync-fs.js';
import { CKPT_BIN } from './helpers/cli.js';
import { SHARED_BASE } from './helpers/shared-store.js';
import { preloadModule, runCkpt } from './reliability/fault-harness.js';
import type { FaultConfig, FaultReport } from './reliability/fault-fs.js';
import { MAIN } from './reliability/scenarios.js';

const FILES = Array.from({ length: 70 }, (_, i) => `big/f${i}.txt`);
const base = mkdtempSync(join(tmpdir(), 'ckpt-flush-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const canMount =
  process.getuid?.() === 0 && !SHARED_BASE && spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs tmpfs /mnt && echo ok'], { encoding: 'utf8' }).stdout?.includes('ok');

/** 70 files and m/x.txt rewritten in turn 1: `restore 1` writes all of them back. */
async function history(): Promise<{ store: string; workspace: string }> {
  const dir = mkdtempSync(join(base, 'case-'));
  const dirs = { store: join(dir, 'store'), workspace: join(dir, 'ws') };
  const paths = [...FILES, 'm/x.txt'];
  for (const d of ['big', 'm']) mkdirSync(join(dirs.workspace, d), { recursive: true });
  for (const p of paths) writeFileSync(join(dirs.workspace, p), `${p} one\n`);
  const store = await openStore({ dir: dirs.store });
  try {
    const s = await (await store.openWorkspace(dirs.workspace)).create({ id: MAIN, baseline: true });
    await s.turn({ text: 'rewrite all' });
    await s.capture(paths, { tool: 'Bash' });
    for (const p of paths) writeFileSync(join(dirs.workspace, p), `${p} two\n`);
    await s.settle(paths);
  } finally {
    await store.close();
  }
  return dirs;
}

/** fsyncs of the 70 files (their staging names or their own), from a counting run's trace. */
function fileFlushes(report: FaultReport | undefined): number {
  return (report?.trace ?? []).filter((t) => t.side === 'workspace' && /sync/.test(t.op) && t.path.startsWith('big/')).length;
}

function expectRestored(workspace: string): void {
  for (const p of [...FILES, 'm/x.txt']) expect(readFileSync(join(workspace, p), 'utf8')).toBe(`${p} one\n`);
}

describe.skipIf(!canSyncFileSystem())('a restore of many files', () => {
  it('flushes the file system once: no fsync per written file, every file restored', async () => {
    // Other tests write meanwhile: a restore that found much of their data waiting for write-back
    // rightly flushed file by file; tried again after a sync, up to three times.
    for (let attempt = 1; ; attempt++) {
      const dirs = await history();
      spawnSync('sync');
      const run = await runCkpt(dirs, ['restore', '1', '--yes']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.report?.trace.length).toBeGreaterThan(0);
      expectRestored(dirs.workspace);
      if (fileFlushes(run.report) === 0 || attempt === 3) {
        expect(fileFlushes(run.report)).toBe(0);
        break;
      }
    }
  });

  it('right after a large write elsewhere (more waiting for write-back than it writes): flushes each file', async () => {
    const dirs = await history();
    // 64 MiB left dirty in the page cache, as a build or a checkout leaves it (written back within ~30 s).
    const other = join(dirs.workspace, '..', 'other.bin');
    writeFileSync(other, Buffer.alloc(64 * 1024 * 1024, 1));
    const run = await runCkpt(dirs, ['restore', '1', '--yes']);
    rmSync(other);
    expect(run.code, run.stderr).toBe(0);
    expect(fileFlushes(run.report)).toBe(FILES.length);
    expectRestored(dirs.workspace);
  });

  it.skipIf(!canMount)('with a folder on another file system inside the workspace: flushes each file and folder', async () => {
    const dirs = await history();
    const saved = join(dirs.workspace, '..', 'm-saved');
    cpSync(join(dirs.workspace, 'm'), saved, { recursive: true, preserveTimestamps: true });
    const report = join(dirs.workspace, '..', 'report.json');
    const config: FaultConfig = { store: dirs.store, workspace: dirs.workspace, report };
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CKPT_FAULT: JSON.stringify(config), NODE_OPTIONS: `--import=${await preloadModule()}` };
    delete env.CKPT_STORE;
    // m/ becomes a tmpfs holding the same file; the restore then writes into it.
    const script = 'mount -t tmpfs tmpfs "$1" && cp -a "$2/." "$1/" && shift 2 && exec "$@"';
    const args = [join(dirs.workspace, 'm'), saved, process.execPath, CKPT_BIN, '--json', '--store', dirs.store, '--workspace', dirs.workspace, '--session', MAIN, 'restore', '1', '--yes', '--force'];
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', ...args], { cwd: dirs.workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(result.code, result.stderr).toBe(0);
    const trace = JSON.parse(readFileSync(report, 'utf8')) as FaultReport;
    expect(fileFlushes(trace)).toBe(FILES.length);
    // The tmpfs went with the namespace; the 70 files on this file system are restored.
    for (const p of FILES) expect(readFileSync(join(dirs.workspace, p), 'utf8')).toBe(`${p} one\n`);
  });
});
