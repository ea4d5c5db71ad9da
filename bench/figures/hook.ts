// hook-capture and hook-scan: what one Claude Code hook call costs as a whole process — `ckpt hook
// claude` spawned with the event JSON on stdin, exactly as Claude Code runs it — in a session of
// 10,000 events. hook-capture: a PreToolUse Edit of a 16 KiB file vs `node -e 0` (the floor of any
// Node hook). hook-scan: a PostToolUse Bash after one file changed in the bench tree vs shadow git
// `add -A` + `commit` of the same change. Needs `npm run build` (the hook runs the built bundle).
// CKPT_BENCH_OLD_BIN adds another build to hook-scan as a third series (built-cli.ts).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadCkpt, need, REPO_ROOT, type CkptSession } from '../ckpt-api.js';
import type { BenchContext } from '../context.js';
import { shadowCheckpoint } from '../baselines/shadow-git.js';
import { sourceText } from '../gen/source-text.js';
import { measure, measureInterleaved, type Sample } from '../measure.js';
import { makeEntry, type Entry } from '../report.js';
import { baselineSession, fmtMs, shadowRepo, writeRel } from './shared.js';
import { startDaemon } from '../ops/daemon.js';
import { BIN, copyStore, oldBin, oldExtra, SH_CLIENT, spawnNode, spawnProgram } from './built-cli.js';

const SIZE = 16 * 1024;
const EVENTS = 10_000;
const AGENT_SESSION = 'bench-hook';

/** A hook process's wall time (it must exit 0 and print nothing). */
const spawnTimed = (args: string[], input: string, env: NodeJS.ProcessEnv, cwd: string): Promise<number> => spawnNode(args, env, cwd, input, true).then((r) => r.ms);

/** The store of the baseline session, holding a Claude session of EVENTS events (setup, unmeasured). */
export async function hookStore(ctx: BenchContext): Promise<string> {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'bundle', 'hook-main.js'))) throw new Error('run `npm run build` first (the hook runs the built bundle)');
  const open = await baselineSession(ctx);
  const ckpt = await loadCkpt();
  const ws = await need((await ckpt.openStore({ dir: open.storeDir })), 'openWorkspace', 'store')(ctx.tree.root);
  const id = `claude-${AGENT_SESSION}`;
  let session: CkptSession;
  try {
    session = await need(ws, 'getSession', 'workspace', ['get'])(id);
    return open.storeDir;
  } catch {
    session = await need(ws, 'createSession', 'workspace', ['create'])({ id, title: 'bench hook session' });
  }
  ctx.log(`  (setup) a Claude session of ${EVENTS} events`);
  const append = need(session, 'append', 'session');
  let batch: Record<string, unknown>[] = [];
  let turn = 0;
  let k = 0;
  for (let n = 2; n <= EVENTS; n++) {
    if (n % 25 === 2) {
      turn++;
      k = 0;
      batch.push({ type: 'turn', turn, text: `prompt ${turn}: please fix the failing test and run the build` });
    } else if (n % 2 === 1) {
      k++;
      batch.push({ type: 'capture', tag: `${turn}.${k}`, turn, k, tool: 'Edit', callId: `toolu_${n}`, files: [{ path: `src/f${n % 700}.ts`, state: 'absent' }] });
    } else batch.push({ type: 'settle', tag: `${turn}.${k}`, files: [{ path: `src/f${(n - 1) % 700}.ts`, state: 'absent' }] });
    if (batch.length >= 2000) {
      await append(batch);
      batch = [];
    }
  }
  if (batch.length) await append(batch);
  return open.storeDir;
}

function hookEnv(ctx: BenchContext): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CLAUDE_PROJECT_DIR: ctx.tree.root };
  delete env.CKPT_HOME;
  return env;
}

export function hookEvent(ctx: BenchContext, name: string, tool: string, input: Record<string, unknown>, i: number): string {
  return JSON.stringify({
    session_id: AGENT_SESSION,
    transcript_path: path.join(ctx.runDir, 'transcript.jsonl'),
    cwd: ctx.tree.root,
    permission_mode: 'default',
    hook_event_name: name,
    tool_name: tool,
    tool_input: input,
    tool_use_id: `toolu_bench_${name}_${i}`,
    ...(name === 'PostToolUse' ? { tool_response: { stdout: '', stderr: '', interrupted: false } } : {}),
  });
}

export async function hookCaptureFigure(ctx: BenchContext): Promise<Entry> {
  const rel = ctx.tree.relPath(ctx.mutable.capture);
  const abs = path.join(ctx.tree.root, rel);
  let ckpt: Sample | Error;
  try {
    const store = await hookStore(ctx);
    const args = [BIN, '--store', store, 'hook', 'claude'];
    ckpt = await measure(ctx.light, async (i) => {
      await writeRel(ctx, rel, sourceText(ctx.tree.seed, 4_000_000 + i, SIZE));
      return spawnTimed(args, hookEvent(ctx, 'PreToolUse', 'Edit', { file_path: abs, old_string: 'a', new_string: 'b', replace_all: false }, i), hookEnv(ctx), ctx.tree.root);
    });
  } catch (err) {
    ckpt = err instanceof Error ? err : new Error(String(err));
  }
  const floor = await measure(ctx.light, () => spawnTimed(['-e', '0'], '', process.env, ctx.tree.root));
  return makeEntry({
    name: 'hook-capture',
    unit: 'ms',
    ckpt,
    baseline: '`node -e 0` spawned (the floor of any Node hook)',
    base: floor,
    goal: `ratio ≤ 2 (PreToolUse Edit of a 16 KiB file, whole process, session of ${EVENTS} events)`,
  });
}

export function hookScanFigure(ctx: BenchContext): Promise<Entry> {
  return hookScan(ctx, false);
}

/**
 * hook-scan-daemon (issue 28): the same hook with the store's daemon running, as `ckpt init` installs
 * a command hook — the shell client (bin/ckpt-hook.sh) forwards the event with curl and the daemon's
 * watched scan looks only at the touched path. The Node thin client (`ckpt hook claude`) is a second
 * series (`node_client_ms`). The daemon's RSS after the runs is reported too.
 */
export function hookScanDaemonFigure(ctx: BenchContext): Promise<Entry> {
  return hookScan(ctx, true);
}

async function hookScan(ctx: BenchContext, withDaemon: boolean): Promise<Entry> {
  const idx = ctx.mutable.incremental;
  const rel = ctx.tree.relPath(idx);
  const original = ctx.tree.content(idx);
  const old = withDaemon ? undefined : oldBin();
  let store: string | Error;
  let oldStore: string | undefined;
  try {
    store = await hookStore(ctx);
    if (old) oldStore = await copyStore(ctx, store, 'hook-scan-old');
  } catch (err) {
    store = err instanceof Error ? err : new Error(String(err));
  }
  const repo = await shadowRepo(ctx);
  const daemon = withDaemon && typeof store === 'string' ? await startDaemon(store) : undefined;
  // Each series writes its own version of the file first (untimed), so each sees exactly one change.
  const change = (key: string, i: number): Promise<void> => writeRel(ctx, rel, Buffer.concat([original, Buffer.from(`// hook edit ${key} ${i}\n`)]));
  const hookRun = (key: string, bin: string, dir: string) => async (i: number) => {
    await change(key, i);
    const event = hookEvent(ctx, 'PostToolUse', 'Bash', { command: 'make gen', description: 'regenerate' }, i);
    const args = ['--store', dir, 'hook', 'claude'];
    const ms = await (bin === SH_CLIENT
      ? spawnProgram(SH_CLIENT, [process.execPath, ...args], hookEnv(ctx), ctx.tree.root, event, true).then((r) => r.ms)
      : spawnTimed([bin, ...args], event, hookEnv(ctx), ctx.tree.root));
    ctx.log(`  hook-scan${withDaemon ? '-daemon' : ''} ${key} #${i}: ${fmtMs(ms)}`);
    return ms;
  };
  let mem: { rss: number; peak: number } | undefined;
  let r;
  try {
    r = await measureInterleaved(ctx.heavy, {
      ckpt: typeof store === 'string' ? hookRun('ckpt', withDaemon ? SH_CLIENT : BIN, store) : undefined,
      old: old && oldStore ? hookRun('old', old, oldStore) : undefined,
      nodeClient: withDaemon && typeof store === 'string' ? hookRun('node-client', BIN, store) : undefined,
      git: async (i: number) => {
        await change('git', i);
        const ms = await shadowCheckpoint(repo);
        ctx.log(`  hook-scan shadow git #${i}: ${fmtMs(ms)}`);
        return ms;
      },
    });
  } finally {
    mem = daemon?.memory();
    await daemon?.stop();
  }
  return makeEntry({
    name: withDaemon ? 'hook-scan-daemon' : 'hook-scan',
    unit: 'ms',
    ckpt: typeof store === 'string' ? r.ckpt : store,
    baseline: 'shadow git `add -A` + `commit` of the same change',
    base: r.git,
    goal: `ratio ≤ 1 (PostToolUse Bash, ${ctx.tree.files}-file tree, one file changed, whole process, session of ${EVENTS} events)`,
    extra: {
      tree_files: ctx.tree.files,
      ...(mem ? { daemon_rss_mb: Math.round(mem.rss / 1e5) / 10, daemon_peak_rss_mb: Math.round(mem.peak / 1e5) / 10 } : {}),
      ...(old ? oldExtra(old, r.old, r.git) : {}),
      ...(r.nodeClient && !(r.nodeClient instanceof Error) ? { node_client_ms: Math.round(r.nodeClient.median * 100) / 100 } : {}),
    },
  });
}
