// The promise with two agents in one folder, model-based: "restore N of a session is exactly the
// workspace the user had when they sent that session's prompt N", whatever the other session did
// since — including tool calls of either session that are still running when a prompt (its own or
// the other session's) comes (DESIGN §10 "A tool call across a prompt", "Another session's tool call
// across a prompt": settle.ts `acrossPrompt`, workspace-timeline.ts `writtenAfterOwnPrompt`).
// Two Claude sessions A and B (distinct session ids, one workspace) through the real hook code path
// (runHook with Claude-shaped payloads, as `ckpt hook claude` runs it); the model is the tree
// snapshotted right before each prompt. Random interleavings of: prompts of A or B; agent Writes
// (PreToolUse, write, PostToolUse); Bash calls with arbitrary effects (succeeding or failing);
// hand edits (no hook); and calls left open — a Write or a Bash whose PreToolUse comes at one place,
// its effects at later ones and its after-tool event later still, with anything between (either
// session's prompts, hand edits, the other session's calls, restores). At random checkpoints a session
// and one of its prompts are picked, `restore N --force` runs through the library (as the CLI's), the
// tree is compared with the model, then the restore is undone and the tree compared with what it was.
// At the end (every call closed) every prompt of both sessions restores exactly, newest to oldest.
// Three files and a folder, so that the sessions collide often. Fast in `npm test`;
// CKPT_PROPERTY_RUNS for more, CKPT_PROPERTY_SEED to replay, CKPT_PROPERTY_DUMP=1 to print the logs,
// CKPT_TWO_SESSIONS_OPS='[…]' to run one list of ops (a counterexample) with the full model,
// CKPT_TWO_SESSIONS_ALL=1 for the full model (the known defects below included).
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import { runHook } from '../src/hooks/run-hook.js';
import { claude } from '../src/hooks/agents/claude.js';
import { agentSessionId } from '../src/session/agent-link.js';
import { claudeEvents as ev, claudeSession, type ClaudeSession } from './fixtures/claude-events.js';
import { treeOf, type TreeEntry } from './fixtures/scan-world.js';
import { dumpLogsIfAsked } from './helpers/dump-logs.js';
import { makeTempDirs } from './helpers/temp.js';

const PATHS = ['a.txt', 'b.txt', 'd/c.txt'] as const;
const CONTENTS = ['one\n', 'two\n', 'three\n', ''] as const;
const WHO = ['A', 'B'] as const;
type Who = (typeof WHO)[number];

type FsOp =
  | { kind: 'write'; path: string; content: string }
  | { kind: 'rm'; path: string }
  | { kind: 'chmod'; path: string; mode: number }
  | { kind: 'rmdir' };
type Op =
  | { kind: 'prompt'; who: Who }
  | { kind: 'write'; who: Who; path: string; content: string }
  | { kind: 'bash'; who: Who; ops: FsOp[]; fails: boolean }
  | { kind: 'hand'; ops: FsOp[] }
  // A call left open: its PreToolUse now, its effects (`effect`) and its after-tool event (`close`) later.
  | { kind: 'open'; who: Who; tool: 'Write'; path: string; content: string }
  | { kind: 'open'; who: Who; tool: 'Bash' }
  // One effect of an open call (picked by index): a Write's write (once), or one more file effect of a Bash.
  | { kind: 'effect'; pick: number; op: FsOp }
  // An open call ends (its Write's write first, if not made yet): PostToolUse, or PostToolUseFailure for a Bash.
  | { kind: 'close'; pick: number; fails: boolean }
  | { kind: 'restore'; who: Who; back: number; undo: boolean };

const who = fc.constantFrom(...WHO);
const fsOp: fc.Arbitrary<FsOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('write' as const), path: fc.constantFrom(...PATHS), content: fc.constantFrom(...CONTENTS) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rm' as const), path: fc.constantFrom(...PATHS) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('chmod' as const), path: fc.constantFrom(...PATHS), mode: fc.constantFrom(0o644, 0o755) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rmdir' as const }) },
);
const fsOps = fc.array(fsOp, { minLength: 1, maxLength: 3 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('prompt' as const), who }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('write' as const), who, path: fc.constantFrom(...PATHS), content: fc.constantFrom(...CONTENTS) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('bash' as const), who, ops: fsOps, fails: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('hand' as const), ops: fsOps }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('open' as const), who, tool: fc.constant('Write' as const), path: fc.constantFrom(...PATHS), content: fc.constantFrom(...CONTENTS) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('open' as const), who, tool: fc.constant('Bash' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('effect' as const), pick: fc.nat(3), op: fsOp }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('close' as const), pick: fc.nat(3), fails: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('restore' as const), who, back: fc.nat(3), undo: fc.boolean() }) },
);

const RUNS = Number(process.env.CKPT_PROPERTY_RUNS ?? 25);
/**
 * Left out unless CKPT_TWO_SESSIONS_ALL=1 (with it, the property fails within a few dozen runs): a
 * limit, a session's second Write of a path its first, still open, holds. A hand edit of the path in
 * between is then taken for the first call's write (a path in flight is the agent's), and the second
 * capture's before-image holds it: a restore to a prompt before the hand edit gives it.
 */
const ALL = process.env.CKPT_TWO_SESSIONS_ALL === '1';

async function apply(root: string, o: FsOp): Promise<void> {
  if (o.kind === 'rmdir') return rm(join(root, 'd'), { recursive: true, force: true });
  const abs = join(root, o.path);
  if (o.kind === 'write') {
    await mkdir(dirname(abs), { recursive: true }).catch(() => {});
    await writeFile(abs, o.content).catch(() => {});
  } else if (o.kind === 'rm') await rm(abs, { force: true });
  else await chmod(abs, o.mode).catch(() => {});
}

/** A list of ops (JSON) to run once, with the full model, instead of the tests below: a replay. */
const REPLAY = process.env.CKPT_TWO_SESSIONS_OPS;
describe.runIf(REPLAY)('two sessions: a replay', () => {
  it('runs CKPT_TWO_SESSIONS_OPS', () => runWorld(JSON.parse(REPLAY!) as Op[], true));
});

describe.skipIf(REPLAY)('two sessions in one workspace: restore N of either is the workspace at its prompt N', () => {
  it('holds with tool calls of either session running across the prompts of both', async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 6, maxLength: 24 }), (ops) => runWorld(ops)), { numRuns: RUNS });
  }, Math.max(120_000, RUNS * 3_000));
});

// The property's counterexamples (2026-12-07, a two-session probe), shrunk, as fixed sequences. D1, D3
// and D4 failed before the rule "decide by content" (settle.ts acrossPrompt, workspace-timeline.ts
// writtenAfterOwnPrompt: the image a path held at the prompt is the latest record of it before the
// prompt, and the write came after when the settled image differs); D2 before a restore's look took
// the paths in flight too (restore.ts outsideChanges).
const prompt = (w: Who): Op => ({ kind: 'prompt', who: w });
const openWrite = (w: Who, path: string, content: string): Op => ({ kind: 'open', who: w, tool: 'Write', path, content });
const hand = (path: string, content: string): Op => ({ kind: 'hand', ops: [{ kind: 'write', path, content }] });
const writeNow: Op = { kind: 'effect', pick: 0, op: { kind: 'rmdir' } }; // the open Write's write
const restoreLast = (w: Who): Op => ({ kind: 'restore', who: w, back: 0, undo: false });
describe.skipIf(REPLAY)('two sessions: fixed examples of the property', () => {
  // D1. B's Write is captured (say, waiting for the user's permission); the user edits the file by hand
  // and prompts A (A's scan records the hand edit); then B writes and settles. At A's prompt 2 the
  // file held the hand edit, which A's restore 2 gives (it kept B's later write).
  it("D1: a hand edit recorded by A's prompt, then B's pending Write: A's restore 2 gives the hand edit", async () => {
    await runWorld([prompt('A'), prompt('B'), openWrite('B', 'a.txt', 'one\n'), hand('a.txt', 'two\n'), prompt('A')], true);
  });
  // D1, within one session (a background subagent's Write).
  it("D1: one session's pending Write, a hand edit, the next prompt, the write: restore 2 gives the hand edit", async () => {
    await runWorld([prompt('A'), openWrite('A', 'a.txt', 'one\n'), hand('a.txt', 'two\n'), prompt('A')], true);
  });
  // D1, the other session's own record: B's second Write of the path completes while the first is
  // pending, A prompts (d/c.txt = two), then B's first call writes and settles. A's restore 1 gives
  // two (it gave B's first capture's before-image, deep).
  it("D1: B's second Write of the path completes during its first: A's restore 1 gives what A's prompt saw", async () => {
    await runWorld([prompt('B'), openWrite('B', 'd/c.txt', 'one\n'), { kind: 'write', who: 'B', path: 'd/c.txt', content: 'two\n' }, prompt('A')], true);
  });
  // D1, a restore's record: A's restore rewrites the path while A's Write on it is pending.
  it("D1: a restore while a Write on the path is pending, the next prompt, the write: restore 2 gives what the restore left", async () => {
    await runWorld([prompt('A'), openWrite('A', 'a.txt', 'two\n'), hand('a.txt', 'one\n'), restoreLast('A'), prompt('A')], true);
  });
  // D2. A restore while a Write is open, to a prompt after its capture: the path is in flight, and the
  // restore's look left any change of it since (the call's write, or a hand edit) as the call's write
  // in progress (a property counterexample: the hand edit, no write yet). Made after every scan, so
  // after the prompt: the look puts it back now (as drift: the model restores with --force).
  it("D2: B's Write written after A's prompt 2 and not yet settled: A's restore 2 puts it back", async () => {
    await runWorld([prompt('A'), prompt('B'), openWrite('B', 'a.txt', 'one\n'), prompt('A'), writeNow, restoreLast('A')], true);
  });
  it('D2: an open Write, the next prompt, a hand edit of its path, restore 2: the hand edit is put back', async () => {
    await runWorld([prompt('A'), openWrite('A', 'a.txt', 'one\n'), prompt('A'), hand('a.txt', 'two\n'), restoreLast('A')], true);
  });
  // D2, then: a restore to 1 left the write (its capture's before-image gives prompt 1) but recorded it
  // as what the path held when the restore came, so a later restore 2 gave the write made after prompt 2.
  it('D2: an open Write written after prompt 2, restore 1, then restore 2 gives what prompt 2 saw', async () => {
    await runWorld([prompt('A'), openWrite('A', 'a.txt', 'one\n'), prompt('A'), writeNow, { kind: 'restore', who: 'A', back: 1, undo: false }, prompt('A')], true);
  });
  // D3. A's Write is written before a prompt and settled after it, and a scan between the write and
  // the prompt (B's prompt) recorded it: A's prompt 2 had nothing to record, and A's restore 2 undid
  // a write the user had at prompt 2.
  it("D3: A's Write written before A's prompt 2, B's prompt between: A's restore 2 keeps it", async () => {
    await runWorld([prompt('A'), openWrite('A', 'a.txt', 'one\n'), writeNow, prompt('B'), prompt('A')], true);
  });
  // D3 across sessions: A's Bash scan records A's pending Write's content; B's prompt 1 then has
  // nothing to record, and B's restore 1 undid the write.
  it("D3: A's Write written, A's Bash scan, B's prompt 1, A's settle: B's restore 1 keeps the write", async () => {
    await runWorld([prompt('A'), openWrite('A', 'a.txt', 'one\n'), writeNow, { kind: 'bash', who: 'A', ops: [], fails: false }, prompt('B')], true);
  });
  // Found with the rule above: a call recorded as written after A's prompt 2 (a capture moved into turn
  // 2, at A's settle) was placed on B's timeline at its own time, after B's prompt 1 — though the write
  // came before it (B's scan recorded it): B's restore 1 undid it. Another session's timeline now takes
  // such a call as its first capture, settled by the moved one's settle (`movedFrom`).
  it("a call moved past A's prompt 2, written before B's prompt 1: B's restore 1 keeps the write", async () => {
    await runWorld([prompt('A'), openWrite('A', 'a.txt', 'one\n'), prompt('A'), writeNow, prompt('B')], true);
  });
  // And the moved capture's images came from the owner index, which held A's later record only: B's
  // record of a hand chmod before A's prompt 3 was lost, and B's restore 1 gave the old mode.
  it("a hand chmod B's prompt recorded while A's Write is open, A's Bash after A's prompt 3: B's restore 1 gives the mode", async () => {
    await runWorld([prompt('A'), openWrite('A', 'a.txt', 'one\n'), { kind: 'hand', ops: [{ kind: 'chmod', path: 'a.txt', mode: 0o755 }] }, prompt('B'), prompt('A'), prompt('A'), { kind: 'bash', who: 'A', ops: [{ kind: 'write', path: 'a.txt', content: 'one\n' }], fails: false }], true);
  });
  // D4. A Write's capture finds its path changed by hand and records that first (`changed outside the
  // agent before Write`); the call is still pending at the next prompt, whose scan records the same
  // hand edit again (one → three, after the tool's capture). Restore 2 kept the later write.
  it("D4: a hand edit the Write's capture recorded, recorded again by the prompt's scan: restore 2 gives the hand edit", async () => {
    await runWorld([prompt('A'), { kind: 'write', who: 'A', path: 'd/c.txt', content: 'one\n' }, hand('d/c.txt', 'three\n'), openWrite('A', 'd/c.txt', 'one\n'), prompt('A')], true);
  });
});

interface OpenCall {
  who: Who;
  id: string;
  tool: 'Write' | 'Bash';
  input: Record<string, unknown>;
  /** A Write's file and content; `done` once written. */
  write?: { path: string; content: string; done: boolean };
}

async function runWorld(ops: readonly Op[], all = ALL): Promise<void> {
  const dirs = await makeTempDirs('ckpt-two-sessions-');
  try {
    const root = dirs.workspace;
    const env = { CLAUDE_PROJECT_DIR: root, CKPT_NO_DAEMON: '1' };
    const hook = async (event: Record<string, unknown>) => {
      const data = Buffer.from(JSON.stringify(event));
      const r = await runHook({ spec: claude, input: { data, tooLarge: false, bytes: data.length }, env, storeDir: dirs.store });
      expect({ code: r.exitCode, out: r.stdout }, JSON.stringify(event)).toEqual({ code: 0, out: '' });
    };
    await writeFile(join(root, 'a.txt'), 'start\n');
    await mkdir(join(root, 'd'));
    await writeFile(join(root, 'd/c.txt'), 'deep\n');
    const sessions: Record<Who, ClaudeSession> = {
      A: claudeSession(root, '2b7c3f9e-1d4a-4c8e-9f20-6a5b1c0d000a'),
      B: claudeSession(root, '2b7c3f9e-1d4a-4c8e-9f20-6a5b1c0d000b'),
    };
    const sid = (w: Who) => agentSessionId('claude', sessions[w].session_id);
    await hook(ev.sessionStart(sessions.A));
    await new Promise((r) => setTimeout(r, 2));
    await hook(ev.sessionStart(sessions.B));
    const store = await openStore({ dir: dirs.store, retention: false });
    try {
      const ws = await store.openWorkspace(root);
      // Each session's prompts, in order: the tree right before each.
      const model: Record<Who, Record<string, TreeEntry>[]> = { A: [], B: [] };
      const open: OpenCall[] = [];
      let call = 0;
      const finish = async (c: OpenCall, fails: boolean) => {
        if (c.write && !c.write.done) await apply(root, { kind: 'write', ...c.write });
        const s = sessions[c.who];
        await hook(c.tool === 'Bash' && fails ? ev.postToolUseFailure(s, 'Bash', c.input, c.id, 'Exit code 1') : ev.postToolUse(s, c.tool, c.input, c.id, c.tool === 'Bash' ? { stdout: '' } : { filePath: c.input.file_path }));
      };
      const restore = async (w: Who, n: number, what: string, undo: boolean) => {
        const session = await ws.get(sid(w));
        const before = await treeOf(root);
        const r = await session.restore(String(n), { force: true });
        expect(await treeOf(root), `${what}: restore ${n} of ${w}`).toEqual(model[w][n - 1]);
        if (undo && r.undo) {
          await session.restore(r.undo, { force: true });
          expect(await treeOf(root), `${what}: undo of restore ${n} of ${w}`).toEqual(before);
        }
      };
      for (const o of ops) {
        // Sessions are ordered by the time of their events (ms): keep two ops apart.
        await new Promise((r) => setTimeout(r, 2));
        // An agent acts on a prompt: nothing of a session before its first.
        if ('who' in o && o.kind !== 'prompt' && model[o.who].length === 0) continue;
        if (!all && (o.kind === 'write' || (o.kind === 'open' && o.tool === 'Write')) && open.some((c) => c.who === o.who && c.write?.path === o.path)) continue;
        if (o.kind === 'prompt') {
          model[o.who].push(await treeOf(root));
          await hook(ev.userPromptSubmit(sessions[o.who], `${o.who} prompt ${model[o.who].length}`));
        } else if (o.kind === 'write') {
          const id = `toolu_${++call}`;
          const input = { file_path: join(root, o.path), content: o.content };
          await hook(ev.preToolUse(sessions[o.who], 'Write', input, id));
          await apply(root, { kind: 'write', path: o.path, content: o.content });
          await hook(ev.postToolUse(sessions[o.who], 'Write', input, id, { filePath: input.file_path }));
        } else if (o.kind === 'bash') {
          const id = `toolu_${++call}`;
          const input = { command: JSON.stringify(o.ops), description: 'effects' };
          await hook(ev.preToolUse(sessions[o.who], 'Bash', input, id));
          for (const f of o.ops) await apply(root, f);
          await hook(o.fails ? ev.postToolUseFailure(sessions[o.who], 'Bash', input, id, 'Exit code 1') : ev.postToolUse(sessions[o.who], 'Bash', input, id, { stdout: '' }));
        } else if (o.kind === 'hand') {
          for (const f of o.ops) await apply(root, f);
        } else if (o.kind === 'open') {
          const id = `toolu_${++call}`;
          const c: OpenCall =
            o.tool === 'Write'
              ? { who: o.who, id, tool: 'Write', input: { file_path: join(root, o.path), content: o.content }, write: { path: o.path, content: o.content, done: false } }
              : { who: o.who, id, tool: 'Bash', input: { command: 'background effects', description: 'effects', run_in_background: true } };
          await hook(ev.preToolUse(sessions[o.who], c.tool, c.input, id));
          open.push(c);
        } else if (o.kind === 'effect' && open.length > 0) {
          const c = open[o.pick % open.length]!;
          if (c.write) {
            if (!c.write.done) await apply(root, { kind: 'write', ...c.write });
            c.write.done = true;
          } else await apply(root, o.op);
        } else if (o.kind === 'close' && open.length > 0) {
          await finish(open.splice(o.pick % open.length, 1)[0]!, o.fails);
        } else if (o.kind === 'restore' && model[o.who].length > 0) {
          const n = Math.max(1, model[o.who].length - o.back);
          await restore(o.who, n, 'checkpoint', o.undo);
        }
      }
      // Every call ends, then every prompt of both sessions restores exactly, newest to oldest.
      for (const c of open.splice(0)) await finish(c, false);
      for (const w of WHO) {
        for (let n = model[w].length; n >= 1; n--) await restore(w, n, 'final', false);
      }
    } finally {
      await store.close();
    }
  } catch (err) {
    await dumpLogsIfAsked(dirs.store);
    throw err;
  } finally {
    await dirs.cleanup();
  }
}
