// Issue 26 items 3, 4, 7: forks account for what the workspace holds beyond the fork point (the
// parent's later turns and other sessions' writes), `/clear` links the new agent session to the one
// it continues, and the log shows agent lifecycle events. Library and hook handler level (fast).
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type Workspace } from '../src/store.js';
import type { Session } from '../src/api/session.js';
import { formatLog } from '../src/history/log-text.js';
import { listLifecycle } from '../src/history/log.js';
import { runHook } from '../src/hooks/run-hook.js';
import { claude } from '../src/hooks/agents/claude.js';
import { agentSessionId } from '../src/session/agent-link.js';
import { claudeEvents as ev, claudeSession } from './fixtures/claude-events.js';
import { treeOf } from './fixtures/scan-world.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let ws: Workspace;
const at = (rel: string) => join(dirs.workspace, rel);
const read = (rel: string) => readFile(at(rel), 'utf8');

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-continuity-');
  store = await openStore({ dir: dirs.store, retention: false });
  ws = await store.openWorkspace(dirs.workspace);
});
afterEach(() => dirs.cleanup());

/** One agent edit: capture, write, settle. */
async function edit(s: Session, rel: string, content: string): Promise<void> {
  await s.capture([rel], { tool: 'Edit' });
  await writeFile(at(rel), content);
  await s.settle([rel]);
}

describe('forks see the whole workspace (item 3)', () => {
  it('fork --at 2 after the parent went on: restore, diff, status and cat agree; the files are left as they are', async () => {
    await writeFile(at('a.txt'), 'v0\n');
    const parent = await ws.create({ id: 'p' });
    await parent.turn();
    await edit(parent, 'a.txt', 'v1\n');
    const tree2 = await treeOf(dirs.workspace);
    await parent.turn();
    await edit(parent, 'a.txt', 'v2\n');
    await parent.turn();
    await edit(parent, 'a.txt', 'v3\n');
    await edit(parent, 'b.txt', 'new in 3\n');
    // Another session of the workspace wrote too, after the fork point.
    const other = await ws.create({ id: 'o' });
    await other.turn();
    await edit(other, 'c.txt', 'other\n');
    const end = await treeOf(dirs.workspace);

    const fork = await ws.fork('p', { atTag: '2' });
    expect(await treeOf(dirs.workspace)).toEqual(end); // left as it is
    const links = await fork.links();
    expect(links.forkedFrom).toMatchObject({ session: 'p', differs: 3 });
    // cat, diff and status: the fork point against the present.
    expect((await fork.readFile('2', 'a.txt')).content?.toString()).toBe('v1\n');
    expect((await fork.diff('2')).changes.map((c) => `${c.status} ${c.path}`).sort()).toEqual(['A b.txt', 'A c.txt', 'M a.txt']);
    const status = await fork.status();
    expect(status.changed.count).toBe(0);
    expect(status.forkedFrom).toMatchObject({ session: 'p', differs: 3 });
    // restore 2 is exact, and undoable.
    const r = await fork.restore('2');
    expect(r.restored).toEqual(['a.txt']);
    expect(r.deleted.sort()).toEqual(['b.txt', 'c.txt']);
    expect(await treeOf(dirs.workspace)).toEqual(tree2);
    await fork.restore(r.undo!);
    expect(await treeOf(dirs.workspace)).toEqual(end);
    // Restoring to a tag before the fork point is exact too (turn 1: a.txt as v0).
    await fork.restore('1');
    expect(await read('a.txt')).toBe('v0\n');
  });

  it('rewind --fork: a later restore to the same tag in the fork stays exact (the recovery capture is not the earliest record)', async () => {
    await writeFile(at('a.txt'), 'v0\n');
    const parent = await ws.create({ id: 'p' });
    await parent.turn();
    await edit(parent, 'a.txt', 'v1\n');
    await parent.turn();
    await edit(parent, 'a.txt', 'v2\n');
    const rewound = await parent.rewind('2', { fork: true });
    expect(await read('a.txt')).toBe('v1\n');
    const fork = await ws.get(rewound.session!);
    const again = await fork.restore('2');
    expect(again.restored).toEqual([]);
    expect(await read('a.txt')).toBe('v1\n');
  });
});

describe('/clear continues a session (item 4) and the log shows lifecycle events (item 7)', () => {
  it('SessionStart source "clear" links the new session to the one before; log and status say where the earlier turns are', async () => {
    const hook = async (event: Record<string, unknown>) => {
      const data = Buffer.from(JSON.stringify(event));
      const r = await runHook({ spec: claude, input: { data, tooLarge: false, bytes: data.length }, env: { CLAUDE_PROJECT_DIR: dirs.workspace }, storeDir: dirs.store });
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe('');
      return r;
    };
    const first = claudeSession(dirs.workspace, 'aaaaaaaa-0000-4000-8000-000000000001');
    await hook(ev.sessionStart(first));
    await hook(ev.userPromptSubmit(first, 'one'));
    await hook(ev.userPromptSubmit(first, 'two'));
    await hook(ev.preCompact(first, 'auto'));
    // /clear: a new session id, the same transcript folder.
    const second = claudeSession(dirs.workspace, 'aaaaaaaa-0000-4000-8000-000000000002');
    const started = await hook(ev.sessionStart(second, 'clear'));
    const firstId = agentSessionId('claude', first.session_id);
    expect(started.did).toContain(`continues ${firstId}`);
    await hook(ev.userPromptSubmit(second, 'three'));

    const s2 = await ws.get(agentSessionId('claude', second.session_id));
    expect((await s2.metadata()).continues).toBe(firstId);
    expect(await s2.links()).toEqual({ continues: { session: firstId, turns: 2 } });
    expect((await s2.status()).continues).toEqual({ session: firstId, turns: 2 });
    const events2 = await s2.events();
    const text = formatLog({ turns: [], checkpoints: [], ...(await s2.links()) });
    expect(text).toContain(`continues session ${firstId}: its 2 turn(s) are there (ckpt log --session ${firstId})`);
    expect(events2.some((e) => e.type === 'turn')).toBe(true);

    // The compaction of the first session is in its timeline.
    const s1 = await ws.get(firstId);
    const lifecycle = listLifecycle(await s1.events());
    expect(lifecycle).toMatchObject([{ type: 'agent_compaction', agent: 'claude', trigger: 'auto' }]);
    const log = formatLog({ turns: [], checkpoints: [], lifecycle });
    expect(log).toContain('claude compacted its context (auto)');
  });
});

describe('restore, diff and cat in a session see every session of the workspace (issue 26, /clear)', () => {
  const hook = async (event: Record<string, unknown>) => {
    const data = Buffer.from(JSON.stringify(event));
    const r = await runHook({ spec: claude, input: { data, tooLarge: false, bytes: data.length }, env: { CLAUDE_PROJECT_DIR: dirs.workspace }, storeDir: dirs.store });
    expect(r.exitCode).toBe(0);
    return r;
  };
  /** A Bash call run through the hooks: PreToolUse, the command's effects, PostToolUse. */
  const bash = async (s: ReturnType<typeof claudeSession>, id: string, effects: () => Promise<void>) => {
    const input = { command: 'effects' };
    await hook(ev.preToolUse(s, 'Bash', input, id));
    await effects();
    await hook(ev.postToolUse(s, 'Bash', input, id, { stdout: '', stderr: '', interrupted: false }));
  };

  it('restoring the earlier session\'s turn after /clear undoes what the continuing session wrote; undo gives it back', async () => {
    await mkdir(at('src'));
    await writeFile(at('src/app.js'), 'app\n');
    await writeFile(at('keep.txt'), 'k\n');
    const first = claudeSession(dirs.workspace, 'aaaaaaaa-0000-4000-8000-000000000011');
    await hook(ev.sessionStart(first));
    const atPrompt1 = await treeOf(dirs.workspace);
    await hook(ev.userPromptSubmit(first, 'one'));
    await bash(first, 't1', async () => {
      await writeFile(at('todo.txt'), 'a\n');
      await mkdir(at('data'));
      await writeFile(at('data/n'), '1\n', { mode: 0o600 });
    });
    await hook(ev.stop(first));
    const second = claudeSession(dirs.workspace, 'aaaaaaaa-0000-4000-8000-000000000012');
    await hook(ev.sessionStart(second, 'clear'));
    const atPrompt2 = await treeOf(dirs.workspace);
    await hook(ev.userPromptSubmit(second, 'two'));
    await bash(second, 't2', async () => {
      await writeFile(at('todo.txt'), 'b\n');
      await rm(at('data'), { recursive: true });
      await symlink('todo.txt', at('t'));
      await rename(at('src'), at('source'));
    });
    await hook(ev.stop(second));
    const end = await treeOf(dirs.workspace);

    const s1 = await ws.get(agentSessionId('claude', first.session_id));
    // cat and diff in the earlier session see the later session's writes.
    expect((await s1.readFile('1', 'src/app.js')).content?.toString()).toBe('app\n');
    expect((await s1.readFile('1', 't')).state).toBe('absent');
    expect((await s1.diff('1')).changes.map((c) => `${c.status} ${c.path}`).sort()).toEqual(['A source', 'A source/app.js', 'A t', 'A todo.txt', 'D src', 'D src/app.js']); // the folders too (the restore makes and deletes them)
    // restore 1 in the earlier session is exact, and undoable.
    const r = await s1.restore('1');
    expect(r.drift).toEqual([]);
    expect(await treeOf(dirs.workspace)).toEqual(atPrompt1);
    await s1.restore(r.undo!);
    expect(await treeOf(dirs.workspace)).toEqual(end);
    // The continuing session's own turn still restores exactly.
    const s2 = await ws.get(agentSessionId('claude', second.session_id));
    await s2.restore('1');
    expect(await treeOf(dirs.workspace)).toEqual(atPrompt2);
  });

  it('a session restored to a point before another session wrote keeps that session\'s earlier work', async () => {
    await writeFile(at('a.txt'), 'v0\n');
    const a = await ws.create({ id: 'a' });
    await a.turn();
    await edit(a, 'a.txt', 'v1\n');
    const b = await ws.create({ id: 'b' });
    await b.turn();
    await edit(b, 'b.txt', 'b1\n');
    const mid = await treeOf(dirs.workspace);
    await a.turn();
    await edit(a, 'a.txt', 'v2\n');
    await edit(b, 'b.txt', 'b2\n');
    await a.restore('2');
    expect(await treeOf(dirs.workspace)).toEqual(mid);
  });
});

describe('cat agrees with restore when another session wrote the path last', () => {
  // Found by a restore-promise probe: session b's own last record of f.txt (its edit) was taken as
  // "what ckpt last recorded", so the present file (a's later write, there at b's prompt 2) looked like
  // drift and `cat 2 f.txt` gave b's stale content while restore, diff and export gave a's.
  it('cat of a tag no capture after touches gives the present file: another session\'s recorded write, not drift', async () => {
    await writeFile(at('f.txt'), 'orig\n');
    const a = await ws.create({ id: 'a' });
    const b = await ws.create({ id: 'b' });
    await b.turn();
    await edit(b, 'f.txt', 'B-edit\n');
    await a.turn();
    await edit(a, 'f.txt', 'A-edit\n');
    await b.turn(); // prompt 2: f.txt holds A-edit
    const file = await b.readFile('2', 'f.txt');
    expect({ content: file.content?.toString(), source: file.source, drift: file.drift }).toEqual({ content: 'A-edit\n', source: 'workspace', drift: undefined });
    expect((await b.restore('2', { dryRun: true })).plan?.entries ?? []).toEqual([]);
    // A hand edit since is still drift from the last record (a's): cat gives the recorded content.
    await writeFile(at('f.txt'), 'hand\n');
    const drifted = await b.readFile('2', 'f.txt');
    expect({ content: drifted.content?.toString(), source: drifted.source, drift: drifted.drift }).toEqual({ content: 'A-edit\n', source: 'recorded', drift: true });
  });
});

describe('a hand edit during a turn is the user\'s, recorded before the next tool capture (issue 26)', () => {
  it('rm by hand after the prompt, then the agent writes the path: restore N gives prompt N, N.2 the hand edit', async () => {
    await writeFile(at('a.txt'), 'v0\n');
    const s = await ws.create({ id: 's' });
    await s.turn();
    await edit(s, 'a.txt', 'v1\n');
    const atPrompt2 = await treeOf(dirs.workspace);
    await s.turn();
    await rm(at('a.txt')); // by hand, during turn 2
    const r = await s.capture(['a.txt'], { tool: 'Write' });
    expect(r.tag).toBe('2.2');
    await writeFile(at('a.txt'), 'agent\n');
    await s.settle(['a.txt']);
    const captures = (await s.events()).filter((e) => e.type === 'capture' && e.turn === 2);
    expect(captures.map((c) => [c.tag, c.tool, (c.files as { state: string }[])[0]!.state])).toEqual([
      ['2.1', 'user', 'file'],
      ['2.2', 'Write', 'absent'],
    ]);
    const end = await treeOf(dirs.workspace);
    const back = await s.restore('2');
    expect(back.drift).toEqual([]);
    expect(await treeOf(dirs.workspace)).toEqual(atPrompt2);
    await s.restore(back.undo!);
    expect(await treeOf(dirs.workspace)).toEqual(end);
    await s.restore('2.2');
    expect(await treeOf(dirs.workspace)).toEqual({});
  });

  it('no outside record when the path holds what ckpt last recorded, or another session\'s recorded write', async () => {
    await writeFile(at('a.txt'), 'v0\n');
    const s = await ws.create({ id: 's' });
    await s.turn();
    await edit(s, 'a.txt', 'v1\n');
    await edit(s, 'a.txt', 'v2\n');
    const o = await ws.create({ id: 'o' });
    await o.turn();
    await edit(o, 'a.txt', 'other\n');
    await s.capture(['a.txt'], { tool: 'Edit' });
    expect((await s.events()).filter((e) => e.type === 'capture').map((c) => c.tool)).toEqual(['Edit', 'Edit', 'Edit']);
  });
});

describe('a fork made after another fork (h7-long probe)', () => {
  it('takes no other fork\'s first record as the workspace after its point: restore of its point is exact', async () => {
    await writeFile(at('f.txt'), 'v0\n');
    const parent = await ws.create({ id: 'p' });
    await parent.turn();
    await edit(parent, 'f.txt', 'v1\n');
    await parent.turn();
    await edit(parent, 'f.txt', 'v2\n');
    await parent.turn();
    const tree3 = await treeOf(dirs.workspace);
    await new Promise((r) => setTimeout(r, 5));
    // The first fork's record holds f.txt as it was at turn 1 (made after turn 3 began).
    await ws.fork('p', { atTag: '1' });
    await new Promise((r) => setTimeout(r, 5));
    const second = await ws.fork('p', { atTag: '3' });
    expect((await second.links()).forkedFrom).toMatchObject({ session: 'p', differs: 0 });
    await second.restore('3', { force: true });
    expect(await treeOf(dirs.workspace)).toEqual(tree3);
  });
});
