// The promise of issue 26, model-based: "restore N is exactly the workspace the user had at prompt N",
// through the real hook handling code path (runHook with Claude-Shaped payloads, as `ckpt hook claude`
// runs it) against a model that is simply the tree snapshotted right before each prompt. Random
// sequences of: prompts, agent Write/Edit calls, Bash calls with arbitrary effects (succeeding, or
// failing after writing: PostToolUseFailure), calls whose after-tool event never comes before the
// turn's end, hand edits followed by a prompt, restores to any earlier
// turn (each compared with the model, and some undone; some right after hand edits no prompt followed), and forks at an earlier turn
// (some over such hand edits) whose restores must give that turn's snapshot (then undone); at the end every prompt exports and
// restores as its snapshot. Fast in `npm test`; CKPT_PROPERTY_RUNS for more.
import { spawnSync } from 'node:child_process';
import { chmod, lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/store.js';
import { exportSession } from '../src/index.js';
import { runHook } from '../src/hooks/run-hook.js';
import { claude } from '../src/hooks/agents/claude.js';
import type { AgentSpec } from '../src/hooks/agent-spec.js';
import { agentSessionId } from '../src/session/agent-link.js';
import { claudeEvents as ev, claudeSession } from './fixtures/claude-events.js';
import { treeOf, type TreeEntry } from './fixtures/scan-world.js';
import { dumpLogsIfAsked } from './helpers/dump-logs.js';
import { makeTempDirs } from './helpers/temp.js';

const PATHS = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt'] as const;
const CONTENTS = ['one\n', 'two\n', 'three\n', ''] as const;

// `move`: a folder renamed, or replacing another (`rm -rf to; mv from to`); `path` is a file it carries,
// the one a hand-mid's agent write then takes (a rename leaves its files' inodes as they were).
type FsOp =
  | { kind: 'write'; path: string; content: string }
  | { kind: 'rm'; path: string }
  | { kind: 'chmod'; path: string; mode: number }
  | { kind: 'move'; from: string; to: string; path: string }
  | { kind: 'link'; from: string; to: string; path: string };
const FOLDERS = ['d', 'd/e', 'x'] as const;
type Op =
  | { kind: 'prompt' }
  | { kind: 'agent-write'; path: string; content: string }
  | { kind: 'bash'; ops: FsOp[]; fails: boolean }
  | { kind: 'hand'; ops: FsOp[] }
  | { kind: 'restore'; back: number; undo: boolean; hand?: FsOp[] }
  | { kind: 'fork'; back: number; to: number; hand?: FsOp[]; drop?: true }
  | { kind: 'clear' }
  | { kind: 'hand-mid'; op: FsOp; content: string }
  | { kind: 'straddle'; path: string; content: string; writeFirst: boolean }
  | { kind: 'lost-after'; path: string; content: string }
  | { kind: 'after-answers' }
  | { kind: 'kill' };

const fsOp: fc.Arbitrary<FsOp> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), path: fc.constantFrom(...PATHS), content: fc.constantFrom(...CONTENTS) }),
  fc.record({ kind: fc.constant('rm' as const), path: fc.constantFrom(...PATHS) }),
  fc.record({ kind: fc.constant('chmod' as const), path: fc.constantFrom(...PATHS), mode: fc.constantFrom(0o644, 0o755) }),
  fc
    .record({ from: fc.constantFrom(...FOLDERS), to: fc.constantFrom(...FOLDERS) })
    .map(({ from, to }) => ({ kind: 'move' as const, from, to, path: `${to}/${from === 'd' ? 'c.txt' : 'f.txt'}` })),
  // A folder replaced by a symlink to another (`rm -rf to; ln -s from to`): its paths now resolve through the link.
  fc
    .record({ from: fc.constantFrom(...FOLDERS), to: fc.constantFrom(...FOLDERS) })
    .map(({ from, to }) => ({ kind: 'link' as const, from, to, path: `${to}/${from === 'd' ? 'c.txt' : 'f.txt'}` })),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'prompt' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('agent-write' as const), path: fc.constantFrom(...PATHS), content: fc.constantFrom(...CONTENTS) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('bash' as const), ops: fc.array(fsOp, { minLength: 1, maxLength: 3 }), fails: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('hand' as const), ops: fc.array(fsOp, { minLength: 1, maxLength: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('restore' as const), back: fc.nat(4), undo: fc.boolean() }) },
  // Hand edits after the agent's last record, with no prompt since: the restore's look puts them back too.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('restore' as const), back: fc.nat(4), undo: fc.boolean(), hand: fc.array(fsOp, { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fork' as const), back: fc.nat(4), to: fc.nat(4) }) },
  // A fork made over hand edits no prompt followed: every other session's restores still give their prompts.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fork' as const), back: fc.nat(4), to: fc.nat(4), hand: fc.array(fsOp, { minLength: 1, maxLength: 3 }) }) },
  // A fork that goes back, then is thrown away (`session rm`) with its restore left in place: the
  // other sessions' restores still undo what it wrote (DESIGN "A removed session's captures stay").
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fork' as const), back: fc.nat(4), to: fc.nat(4), drop: fc.constant(true as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('hand-mid' as const), op: fsOp, content: fc.constantFrom(...CONTENTS) }) },
  // A tool call across a prompt (a background subagent): PreToolUse, the next prompt, PostToolUse —
  // written before the prompt or after it.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('straddle' as const), path: fc.constantFrom(...PATHS), content: fc.constantFrom(...CONTENTS), writeFirst: fc.boolean() }) },
  // A call that failed with no after-tool event (Codex's unapplied patch), the turn's end, the next
  // prompt, then during that turn a hand edit of the path before the agent writes it.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('lost-after' as const), path: fc.constantFrom(...PATHS), content: fc.constantFrom(...CONTENTS) }) },
);

/**
 * Claude Code's table, with its Stop sent only once every tool call of the turn has ended, as Codex's
 * (agents/codex.ts `endsCalls`; Codex's payloads are Claude-shaped): a capture still in flight then is
 * a call that ended without an after-tool event, settled there.
 */
const SPEC: AgentSpec = { ...claude, events: { ...claude.events, Stop: { action: 'turn-end', endsCalls: true } } };

/** Daemon mode: the work queued behind answers runs (the daemon's queue), or the daemon is killed first. */
const daemonOp = fc.oneof(
  { weight: 12, arbitrary: op },
  { weight: 2, arbitrary: fc.constant({ kind: 'after-answers' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'kill' as const }) },
);

const RUNS = Number(process.env.CKPT_PROPERTY_RUNS ?? 5);

/** The Claude session id of the n-th conversation of a run. */
function sessionUuid(n: number): string {
  return `2b7c3f9e-1d4a-4c8e-9f20-6a5b1c0d${String(n).padStart(4, '0')}`;
}

async function apply(root: string, o: FsOp): Promise<void> {
  const abs = join(root, o.path);
  if (o.kind === 'write') {
    // A path whose parent is a file cannot be written (the model never makes such trees).
    await mkdir(dirname(abs), { recursive: true }).catch(() => {});
    await writeFile(abs, o.content).catch(() => {});
  } else if (o.kind === 'rm') await rm(abs, { force: true });
  else if (o.kind === 'chmod') await chmod(abs, o.mode).catch(() => {});
  else if (o.from !== o.to && !o.to.startsWith(`${o.from}/`) && !o.from.startsWith(`${o.to}/`)) {
    const [from, to] = [join(root, o.from), join(root, o.to)];
    if (!(await lstat(from).then((st) => st.isDirectory(), () => false))) return;
    await rm(to, { recursive: true, force: true });
    await mkdir(dirname(to), { recursive: true }).catch(() => {});
    if (o.kind === 'link') await symlink(relative(dirname(to), from), to).catch(() => {});
    else await rename(from, to).catch(() => {});
  }
}

describe('the hook promise: restore N is the workspace at prompt N', () => {
  it('holds for random agent calls, failing tools, hand edits, restores and forks', async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 14 }), (ops) => runWorld(ops, false)), { numRuns: RUNS });
  }, Math.max(120_000, RUNS * 2_000));

  // Hooks answered by a daemon's store (CkptOptions.defer): owner records and content copies follow
  // the answers, run at random points or lost when the daemon is killed — after which scans by other
  // processes (its claim left, its process gone) catch the owner index up with the logs first.
  it('holds under a daemon whose work after its answers runs late or is lost to a kill', async () => {
    await fc.assert(fc.asyncProperty(fc.array(daemonOp, { minLength: 4, maxLength: 16 }), (ops) => runWorld(ops, true)), { numRuns: RUNS });
  }, Math.max(120_000, RUNS * 2_000));
});

async function runWorld(ops: readonly Op[], daemon: boolean): Promise<void> {
  const dirs = await makeTempDirs('ckpt-promise-');
  let daemonStore: Store | undefined;
  try {
    const root = dirs.workspace;
    // Daemon mode: no CKPT_NO_DAEMON, so that a scan finds a killed daemon's claim (scanViaDaemon).
    const env: Record<string, string> = daemon ? { CLAUDE_PROJECT_DIR: root } : { CLAUDE_PROJECT_DIR: root, CKPT_NO_DAEMON: '1' };
    // The daemon's store. What follows each answer (`defer`: owner records and the copies they name)
    // runs right after it, as in the daemon — unless the daemon is killed first (the next op is a
    // kill); what waits for a quiet daemon (`deferIdle`: tool captures' content copies) runs only at
    // an `after-answers` op, late, or is lost to a kill.
    let soon: (() => Promise<void>)[] = [];
    let idle: (() => Promise<void>)[] = [];
    let killNext = false;
    let daemonStarted = Date.now();
    const openDaemonStore = () => openStore({ dir: dirs.store, retention: false, defer: (work) => void soon.push(work), deferIdle: (work) => void idle.push(work) });
    daemonStore = daemon ? await openDaemonStore() : undefined;
    // `/clear` starts a new Claude session (a new ckpt session continuing the one before).
    let s = claudeSession(root, sessionUuid(0));
    const hook = async (event: Record<string, unknown>) => {
      const data = Buffer.from(JSON.stringify(event));
      const r = await runHook({ spec: SPEC, input: { data, tooLarge: false, bytes: data.length }, env, storeDir: dirs.store, ...(daemonStore ? { store: daemonStore } : {}) });
      expect({ code: r.exitCode, out: r.stdout }, JSON.stringify(event)).toEqual({ code: 0, out: '' });
      if (!killNext) for (const work of soon.splice(0)) await work();
    };
    await writeFile(join(root, 'a.txt'), 'start\n');
    await hook(ev.sessionStart(s));
    const store = await openStore({ dir: dirs.store, retention: false });
    const ws = await store.openWorkspace(root);
    let sid = agentSessionId('claude', s.session_id);
    // Every prompt of every session, in order: the tree right before it, its session and turn.
    const model: { tree: Record<string, TreeEntry>; sid: string; turn: number }[] = [];
    const prompt = async () => {
      model.push({ tree: await treeOf(root), sid, turn: model.filter((m) => m.sid === sid).length + 1 });
      await hook(ev.userPromptSubmit(s, `prompt ${model.length}`));
    };
    let call = 0;
    const agentWrite = async (path: string, content: string) => {
      const id = `toolu_${++call}`;
      const input = { file_path: join(root, path), content };
      await hook(ev.preToolUse(s, 'Write', input, id));
      await apply(root, { kind: 'write', path, content });
      await hook(ev.postToolUse(s, 'Write', input, id, { filePath: input.file_path }));
    };
    for (const [i, o] of ops.entries()) {
      killNext = ops[i + 1]?.kind === 'kill';
      // Sessions are ordered by the time of their events (ms): keep two ops apart.
      await new Promise((r) => setTimeout(r, 2));
      if (o.kind === 'after-answers') {
        for (const work of idle.splice(0)) await work();
      } else if (o.kind === 'kill') {
        if (!daemonStore) continue;
        // What it had not done after its answers is lost; its claim stays behind, its process gone.
        soon = [];
        idle = [];
        await daemonStore.close();
        const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
        await mkdir(join(dirs.store, 'daemon'), { recursive: true, mode: 0o700 });
        await writeFile(join(dirs.store, 'daemon', 'daemon.json'), JSON.stringify({ pid: Number(dead.stdout), url: 'http://127.0.0.1:9', port: 9, startedAt: new Date(daemonStarted).toISOString() }));
        daemonStarted = Date.now();
        daemonStore = await openDaemonStore();
      } else if (o.kind === 'prompt') {
        await prompt();
      } else if (o.kind === 'clear') {
        s = claudeSession(root, sessionUuid(Number(s.session_id.slice(-4)) + 1));
        sid = agentSessionId('claude', s.session_id);
        await hook(ev.sessionStart(s, 'clear'));
      } else if (o.kind === 'agent-write') {
        await agentWrite(o.path, o.content);
      } else if (o.kind === 'hand-mid') {
        // A hand edit during a turn, then the agent writes the same path: the hand edit is the
        // user's, recorded before the tool's capture, so restore N still gives prompt N's tree — for
        // any path: one this session recorded, one only the baseline or another session knew, one
        // new to ckpt (DESIGN "Hand edits during a turn"). During a turn: an agent acts on a prompt, so
        // not in a session's turn 0 (after a /clear, before its first prompt, nothing looked).
        if (model.at(-1)?.sid === sid) {
          await apply(root, o.op);
          await agentWrite(o.op.path, o.content);
        }
      } else if (o.kind === 'straddle') {
        const id = `toolu_${++call}`;
        const input = { file_path: join(root, o.path), content: o.content };
        await hook(ev.preToolUse(s, 'Write', input, id));
        if (o.writeFirst) await apply(root, { kind: 'write', path: o.path, content: o.content });
        await prompt();
        if (!o.writeFirst) await apply(root, { kind: 'write', path: o.path, content: o.content });
        await hook(ev.postToolUse(s, 'Write', input, id, { filePath: input.file_path }));
      } else if (o.kind === 'lost-after') {
        const input = { file_path: join(root, o.path), content: 'never written\n' };
        await hook(ev.preToolUse(s, 'Write', input, `toolu_${++call}`));
        await hook(ev.stop(s));
        await prompt();
        await apply(root, { kind: 'write', path: o.path, content: 'by hand\n' });
        await agentWrite(o.path, o.content);
      } else if (o.kind === 'bash') {
        const id = `toolu_${++call}`;
        const input = { command: JSON.stringify(o.ops), description: 'effects' };
        await hook(ev.preToolUse(s, 'Bash', input, id));
        for (const f of o.ops) await apply(root, f);
        await hook(o.fails ? ev.postToolUseFailure(s, 'Bash', input, id, 'Exit code 1') : ev.postToolUse(s, 'Bash', input, id, { stdout: '' }));
      } else if (o.kind === 'hand') {
        // Hand edits between prompts: the user edits, then sends the next prompt.
        for (const f of o.ops) await apply(root, f);
        await prompt();
      } else if (o.kind === 'restore' && model.length > 0) {
        // Any earlier prompt, of this session or of one before a /clear.
        const to = model[Math.max(0, model.length - 1 - o.back)]!;
        const session = await ws.get(to.sid);
        for (const f of o.hand ?? []) await apply(root, f);
        const before = await treeOf(root);
        const r = await session.restore(String(to.turn), { force: true });
        expect(await treeOf(root), `restore ${to.turn} in ${to.sid}`).toEqual(to.tree);
        if (o.undo && r.undo) {
          await session.restore(r.undo, { force: true });
          expect(await treeOf(root), `undo of restore ${to.turn} in ${to.sid}`).toEqual(before);
        }
      } else if (o.kind === 'fork') {
        const mine = model.filter((m) => m.sid === sid);
        if (mine.length > 0) {
          const n = Math.max(1, mine.length - o.back);
          for (const f of o.hand ?? []) await apply(root, f);
          const before = await treeOf(root);
          const fork = await ws.fork(sid, { atTag: String(n) });
          const m = Math.max(1, n - o.to);
          const r = await fork.restore(String(m), { force: true });
          expect(await treeOf(root), `restore ${m} in a fork at ${n}`).toEqual(mine[m - 1]!.tree);
          if (o.drop) {
            await ws.remove(fork.id);
            continue;
          }
          if (r.undo) await fork.restore(r.undo, { force: true });
          expect(await treeOf(root), `undo in the fork at ${n}`).toEqual(before);
        }
      }
    }
    // Every prompt of every session exports as it was (a copy, the workspace untouched), then restores
    // exactly, newest to oldest.
    for (const [i, to] of model.entries()) {
      const out = join(dirs.base, `export-${i}`);
      await exportSession(store, to.sid, String(to.turn), out);
      expect(await treeOf(out), `export ${to.turn} of ${to.sid}`).toEqual(to.tree);
    }
    for (const to of [...model].reverse()) {
      await (await ws.get(to.sid)).restore(String(to.turn), { force: true });
      expect(await treeOf(root), `final restore ${to.turn} in ${to.sid}`).toEqual(to.tree);
    }
  } catch (err) {
    // With a replay (CKPT_PROPERTY_SEED), CKPT_PROPERTY_DUMP=1 prints every log of the failing run.
    await dumpLogsIfAsked(dirs.store);
    throw err;
  } finally {
    await daemonStore?.close();
    await dirs.cleanup();
  }
}
