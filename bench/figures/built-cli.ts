// The built `ckpt` as the process figures run it (hook-capture, hook-scan, cli-scan): its bin, a spawn
// timed as a whole process, and the optional other build of CKPT_BENCH_OLD_BIN=/path/to/other/bin/ckpt.js,
// run as a third series on a copy of the same store (before/after pairs of a CLI change).
import { spawn } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../ckpt-api.js';
import type { BenchContext } from '../context.js';
import { timed, type Sample } from '../measure.js';
import { errorText, ratio } from '../report.js';

export const BIN = path.join(REPO_ROOT, 'bin', 'ckpt.js');

/** The other build's `bin/ckpt.js` named by CKPT_BENCH_OLD_BIN (must be built), else undefined. */
export function oldBin(): string | undefined {
  const bin = process.env.CKPT_BENCH_OLD_BIN;
  if (!bin) return undefined;
  const abs = path.resolve(bin);
  if (!existsSync(path.join(path.dirname(abs), '..', 'dist', 'bundle', 'main.js'))) throw new Error(`CKPT_BENCH_OLD_BIN=${bin}: no built bundle beside it (run \`npm run build\` there)`);
  return abs;
}

/** A copy of a store folder (setup), so that a second build works on the same history without sharing its scan index. */
export async function copyStore(ctx: BenchContext, storeDir: string, label: string): Promise<string> {
  const dir = path.join(ctx.runDir, `store-copy-${label}`);
  await fsp.rm(dir, { recursive: true, force: true });
  // Session locks are left out: one this process holds may linger (and vanish mid-copy), and a
  // copied one would make the other build wait for its stale takeover.
  await fsp.cp(storeDir, dir, { recursive: true, verbatimSymlinks: true, filter: (src) => !src.endsWith('.ckpt-lock') });
  return dir;
}

export const SH_CLIENT = path.join(REPO_ROOT, 'bin', 'ckpt-hook.sh');

/**
 * Spawns `node args…` with `input` on stdin; resolves to its wall time and stdout. Rejects on a
 * non-zero exit or any output on stderr — and, with `silent` (a hook answers nothing), on stdout.
 */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv, cwd: string, input = '', silent = false): Promise<{ ms: number; out: string }> {
  return spawnProgram(process.execPath, args, env, cwd, input, silent);
}

/** spawnNode for any program (the shell hook client). */
export function spawnProgram(program: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, input = '', silent = false): Promise<{ ms: number; out: string }> {
  let out = '';
  return timed(
    () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(program, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
        let err = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (err += d));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 && err === '' && !(silent && out !== '') ? resolve() : reject(new Error(`${path.basename(program === process.execPath ? (args[0] ?? 'node') : program)} exited ${code}: ${(err || out).slice(0, 300)}`))));
        child.stdin.end(input);
      }),
  ).then((ms) => ({ ms, out }));
}

/** `old_bin`, `old_ms` and `old_ratio` (the other build ÷ the baseline) of an entry. */
export function oldExtra(bin: string, old: Sample | Error | undefined, base: Sample | Error | undefined): Record<string, unknown> {
  if (old instanceof Error || old === undefined) return { old_bin: bin, old_ms: null, ...(old ? { old_error: errorText(old) } : {}) };
  return { old_bin: bin, old_ms: Math.round(old.median * 100) / 100, old_ratio: ratio(old.median, base instanceof Error || !base ? null : base.median) };
}
