// A restore looks first (DESIGN §10 "A restore looks first"): what changed outside the agent since
// ckpt last looked — hand edits after the agent's last record, with no prompt since — is part of
// "restore N": drift (refused, nothing changed or recorded) unless forced, and then put back exactly,
// recorded as the user's change before the recovery capture, so the undo brings it back. Changes
// older than the tag are left (they were there at it), and a session whose turns never scanned
// cannot tell when a change was made: nothing is looked at there.
import { chmod, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/index.js';
import { isCkptError } from '../src/errors.js';
import { makeWorld, snapshot } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';
import { makeTempDirs } from './helpers/temp.js';
import { startMcp } from './helpers/mcp.js';

const world = useWorlds(makeWorld);

async function refusal(p: Promise<unknown>): Promise<{ code: string; drift: string[] }> {
  try {
    await p;
  } catch (err) {
    if (!isCkptError(err)) throw err;
    return { code: err.code, drift: ((err.data as { drift?: string[] }).drift ?? []).slice().sort() };
  }
  throw new Error('expected a refusal');
}

/**
 * A second session of the world's workspace (after a /clear: the first one recorded the files), at its
 * first prompt: `agent` is a tool call of it (capture, write, settle), `tools` its captures as `tool:paths`.
 */
async function afterClear(w: Awaited<ReturnType<typeof world>>) {
  const s = await w.ws.create({ title: 'after /clear' });
  await s.turn();
  const agent = async (path: string, content: string, tool = 'Write') => {
    await s.capture([path], { tool });
    await w.write(path, content);
    await s.settle([path]);
  };
  const tools = async () =>
    ((await s.events()).filter((e) => e.type === 'capture') as unknown as { tool: string; files: { path: string }[] }[]).map((c) => `${c.tool}:${c.files.map((f) => f.path).join(',')}`);
  return { s, agent, tools };
}

describe('a restore looks first', () => {
  it('refuses hand edits made since the last prompt as drift, puts them back when forced, and the undo brings them again', async () => {
    const w = await world();
    await w.write('agent.txt', 'v1\n');
    await w.write('mine.txt', 'mine at prompt 1\n');
    await w.write('gone.txt', 'deleted by hand later\n');
    await w.write('exec.sh', 'echo hi\n', 0o644);
    await w.session.turn(); // scans first: ckpt knows the whole workspace at prompt 1
    const atPrompt1 = await snapshot(w.root);
    await w.tool(['agent.txt'], () => w.write('agent.txt', 'v2\n'));
    // By hand, after the agent's last record, no prompt since:
    await writeFile(w.at('mine.txt'), 'edited by hand\n');
    await writeFile(w.at('notes.txt'), 'new by hand\n');
    await rm(w.at('gone.txt'));
    await chmod(w.at('exec.sh'), 0o755);
    const handState = await snapshot(w.root);
    const eventsBefore = (await w.session.events()).length;

    expect(await refusal(w.session.restore('1'))).toEqual({ code: 'DRIFT', drift: ['exec.sh', 'gone.txt', 'mine.txt', 'notes.txt'] });
    expect(await snapshot(w.root)).toEqual(handState);
    expect((await w.session.events()).length, 'a refused restore records nothing').toBe(eventsBefore);

    const dry = await w.session.restore('1', { dryRun: true });
    expect(dry.restored.slice().sort()).toEqual(['agent.txt', 'exec.sh', 'gone.txt', 'mine.txt']);
    expect(dry.deleted).toEqual(['notes.txt']);
    expect(dry.wouldRefuse).toEqual({ code: 'DRIFT', paths: expect.arrayContaining(['notes.txt', 'mine.txt']) });
    expect((await w.session.events()).length, 'a dry run records nothing').toBe(eventsBefore);

    const forced = await w.session.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
    // The hand edits were recorded as the user's change, just before the recovery capture.
    const events = await w.session.events();
    const look = events.find((e) => e.type === 'capture' && e.tool === 'user' && e.reason === 'changed outside the agent before a restore') as { tag: string; files: { path: string; state: string }[] } | undefined;
    expect(look?.files.map((f) => `${f.path}:${f.state}`).sort()).toEqual(['exec.sh:file', 'gone.txt:file', 'mine.txt:file', 'notes.txt:absent']);
    expect(forced.undo).toBe('1.3');
    expect(look!.tag).toBe('1.2');

    await w.session.restore(forced.undo!);
    expect(await snapshot(w.root), 'the undo gives back the hand edits').toEqual(handState);
    // 1.2 is the workspace as the agent left it, before the hand edits.
    await w.session.restore('1.2', { force: true });
    expect(await readFile(w.at('agent.txt'), 'utf8')).toBe('v2\n');
    expect(await readFile(w.at('mine.txt'), 'utf8')).toBe('mine at prompt 1\n');
    // Nothing changed by hand since: a restore to 1 is not refused.
    const again = await w.session.restore('1');
    expect(again.drift).toEqual([]);
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a path named in a restore that only a hand edit since made is the look\'s, not unknown', async () => {
    const w = await world();
    await w.session.turn();
    await w.tool(['a.txt'], () => w.write('a.txt', 'agent\n'));
    await writeFile(w.at('notes.txt'), 'by hand\n');
    expect(await refusal(w.session.restore('1', { paths: ['notes.txt'] }))).toEqual({ code: 'DRIFT', drift: ['notes.txt'] });
    const r = await w.session.restore('1', { paths: ['notes.txt'], force: true });
    expect(r.deleted).toEqual(['notes.txt']);
    expect(await readFile(w.at('a.txt'), 'utf8')).toBe('agent\n');
  });

  it('looks for a restore to 0 too (before the first turn: from the session\'s start)', async () => {
    const w = await world();
    const atStart = await snapshot(w.root);
    await w.write('a.txt', 'before the first prompt\n'); // recorded by the turn's scan (0.1)
    await w.session.turn();
    await writeFile(w.at('notes.txt'), 'by hand\n');
    expect(await refusal(w.session.restore('0'))).toEqual({ code: 'DRIFT', drift: ['notes.txt'] });
    expect(await refusal(w.session.restore('@0'))).toEqual({ code: 'DRIFT', drift: ['notes.txt'] });
    await w.session.restore('@0', { force: true });
    expect(await snapshot(w.root)).toEqual(atStart);
  });

  it('a rewind looks first too', async () => {
    const w = await world();
    await w.session.turn({ messageCount: 2 });
    const atPrompt1 = await snapshot(w.root);
    await w.tool(['a.txt'], () => w.write('a.txt', 'agent\n'));
    await writeFile(w.at('notes.txt'), 'by hand\n');
    expect(await refusal(w.session.rewind('1'))).toEqual({ code: 'DRIFT', drift: ['notes.txt'] });
    const r = await w.session.rewind('1', { force: true });
    expect(r.watermark).toMatchObject({ turn: 1, messageCount: 2 });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a rewind to a fork looks first too: refused as drift with no fork made, forced into a fork whose undo gives the hand edits back', async () => {
    const w = await world();
    await w.session.turn({ messageCount: 2 });
    const atPrompt1 = await snapshot(w.root);
    await w.tool(['a.txt'], () => w.write('a.txt', 'agent\n'));
    await writeFile(w.at('notes.txt'), 'by hand\n');
    await writeFile(w.at('a.txt'), 'the agent\'s, edited by hand\n');
    const handState = await snapshot(w.root);
    const sessionsBefore = (await w.ws.list()).length;
    expect(await refusal(w.session.rewind('1', { fork: true }))).toEqual({ code: 'DRIFT', drift: ['a.txt', 'notes.txt'] });
    expect((await w.ws.list()).length, 'a refusal makes no fork').toBe(sessionsBefore);
    const dry = await w.session.rewind('1', { fork: true, dryRun: true });
    expect(dry.deleted.slice().sort()).toEqual(['a.txt', 'notes.txt']);
    const r = await w.session.rewind('1', { fork: true, force: true });
    expect(r.forked).toBe(true);
    expect(await snapshot(w.root)).toEqual(atPrompt1);
    const fork = await w.ws.get(r.session);
    await fork.restore(r.undo!);
    expect(await snapshot(w.root), 'the undo in the fork gives back the hand edits').toEqual(handState);
    await fork.restore('1');
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a hand edit during a turn of a file this session never recorded is the user\'s, recorded before the tool\'s capture: restore N gives prompt N\'s content', async () => {
    const w = await world();
    await w.write('config.json', '{"v":1}\n');
    await w.write('other.txt', 'untouched\n');
    await w.write('gone.txt', 'deleted by hand, then written by the agent\n');
    await w.session.turn(); // the first session (before a /clear) recorded them
    const { s: s2, agent, tools } = await afterClear(w);
    const atPrompt1 = await snapshot(w.root);
    // While the agent works on turn 1: the user edits a file this session never recorded, then the agent edits it too.
    await writeFile(w.at('config.json'), '{"v":2,"by":"hand"}\n');
    await agent('config.json', '{"v":3,"by":"agent"}\n', 'Edit');
    await agent('other.txt', 'agent\n');
    await rm(w.at('gone.txt'));
    await agent('gone.txt', 'agent\n');
    // The hand edits are the user's records; other.txt, unchanged since the first session recorded it, is the tool's alone.
    expect(await tools()).toEqual(['user:config.json', 'Edit:config.json', 'Write:other.txt', 'user:gone.txt', 'Write:gone.txt']);
    await s2.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('the same for a file made by hand during the turn, and for a hand chmod of a path in a folder the scan index never held', async () => {
    // Found by the hook property test (widened to any path): the scan of the path alone declined
    // (its folder was newer than the index) and the file new to ckpt was left out, so restore 1 gave
    // the hand's mode and the hand's file.
    const w = await world();
    await w.write('a.txt', 'a\n');
    await w.session.turn();
    await w.tool(['d/e/f.txt'], () => w.write('d/e/f.txt', 'one\n')); // its folders: an owner record's, not the index's
    const { s: s2, agent, tools } = await afterClear(w);
    const atPrompt1 = await snapshot(w.root);
    await chmod(w.at('d/e/f.txt'), 0o755);
    await agent('d/e/f.txt', 'one\n');
    await w.write('new.txt', 'made by hand\n');
    await agent('new.txt', 'agent\n');
    await mkdir(w.at('g'));
    await w.write('g/h.txt', 'made by hand in a new folder\n');
    await agent('g/h.txt', 'agent\n');
    expect(await tools()).toEqual(['user:d/e/f.txt', 'Write:d/e/f.txt', 'user:new.txt', 'Write:new.txt', 'user:g,g/h.txt', 'Write:g/h.txt']);
    await s2.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a hand removal, then the agent writes another path of that folder before this one: the removal is still the user\'s', async () => {
    const w = await world();
    await w.write('src/x.ts', 'x\n');
    await w.write('src/z.ts', 'z\n');
    await w.session.scan({ rewriteIndex: 'always' }); // the index holds src/ (else the full scan answers)
    await w.session.turn();
    const { s: s2, agent, tools } = await afterClear(w);
    const atPrompt1 = await snapshot(w.root);
    await rm(w.at('src/x.ts'));
    await agent('src/y.ts', 'new\n'); // its capture looks (the folder changed): at its known files too
    await agent('src/x.ts', 'agent\n'); // the folder's change is older than the last event now
    expect(await tools()).toEqual(['user:src/x.ts', 'Write:src/y.ts', 'Write:src/x.ts']);
    await s2.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a path a restore\'s look left as it was, made by hand during a later turn and then written by the agent, is looked at', async () => {
    // Found by the hook property test: the look's capture had no settle, so this session held b.txt for
    // captured and never settled, and the later capture did not look at it.
    const w = await world();
    await w.session.turn();
    await w.write('b.txt', 'one\n');
    await w.session.turn();
    await rm(w.at('b.txt'));
    await w.write('a.txt', 'by hand\n');
    await w.session.restore('1', { force: true }); // deletes a.txt; b.txt was absent at 1 and is now
    await w.session.turn();
    const atPrompt3 = await snapshot(w.root);
    await w.write('b.txt', 'made by hand\n');
    await w.tool(['b.txt'], () => w.write('b.txt', 'agent\n'));
    await w.session.restore('3', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt3);
  });

  it('folders renamed or replaced by hand (their files keep older inodes): during a turn before the agent writes in them, and after the last prompt', async () => {
    // Found by a real-agent probe (Claude Code, Codex, Gemini CLI, opencode, Copilot): a folder's
    // rename changes the folder's ctime, not its files', so both looks took the moved files for old.
    const w = await world();
    for (const [path, content] of [['A/f', 'a\n'], ['B/f', 'b\n'], ['lib/x/y.txt', 'y\n'], ['C/f', 'c\n'], ['D/f', 'd\n'], ['H/sub/g.txt', 'g\n']] as const) await w.write(path, content);
    await chmod(w.at('H/sub'), 0o700);
    await w.session.turn(); // the first session (before a /clear) recorded them
    await sleep(2_100); // the files' inodes older than the clock slack
    const { s: s2, agent } = await afterClear(w);
    const atPrompt1 = await snapshot(w.root);
    // While the agent works on prompt 1, by hand:
    await rm(w.at('A'), { recursive: true });
    await rename(w.at('B'), w.at('A'));
    await rename(w.at('lib/x'), w.at('lib/x2'));
    // The agent: another call first (a round-2 probe: the folders' changes were then older than the last event), then in those folders.
    await agent('other.txt', 'x\n');
    await agent('A/f', 'agent\n', 'Edit');
    await agent('lib/x2/y.txt', 'agent\n', 'Edit');
    // A folder moved away by hand, then the agent writes below its old name (making H/sub again, with the umask's mode).
    await rename(w.at('H'), w.at('H2'));
    await agent('H/sub/h.txt', 'agent\n');
    await s2.turn();
    // After the last prompt:
    await rm(w.at('C'), { recursive: true });
    await rename(w.at('D'), w.at('C'));
    expect((await refusal(s2.restore('1'))).drift).toEqual(['C/f', 'D', 'D/f']);
    await s2.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
    expect((await stat(w.at('H/sub'))).mode & 0o777).toBe(0o700);
  });

  it('a file removed by hand during the turn, then written by the agent after other writes (elsewhere, in its folder, in the root): the removal is the user\'s', async () => {
    // Found by a round-2 preview probe: the removal's folder change was older than the session's last event.
    const w = await world();
    for (const [path, content] of [['d/f', 'f0\n'], ['e/o', 'o\n'], ['s/f', 'sf\n'], ['s/g', 'sg\n'], ['r.txt', 'r\n'], ['o.txt', 'o\n']] as const) await w.write(path, content);
    await w.session.scan({ rewriteIndex: 'always' }); // the index holds the folders (else the full scan answers)
    await w.session.turn(); // the first session (before a /clear) recorded them
    await sleep(2_100); // the files' inodes older than the clock slack: only the folders' changes tell
    const { s: s2, agent, tools } = await afterClear(w);
    const atPrompt1 = await snapshot(w.root);
    await rm(w.at('d/f'));
    await rm(w.at('s/f'));
    await rm(w.at('r.txt'));
    await agent('e/o', 'agent\n', 'Edit'); // elsewhere
    await agent('d/f', 'agent\n');
    await agent('s/g', 'agent\n', 'Edit'); // in the removed file's folder
    await agent('s/f', 'agent\n');
    await agent('o.txt', 'agent\n', 'Edit'); // in the root
    await agent('r.txt', 'agent\n');
    // Each removal is found by a look at its folder's files: at the first capture below a folder it changed.
    expect((await tools()).filter((t) => t.startsWith('user:'))).toEqual(['user:r.txt', 'user:d/f', 'user:s/f']);
    await s2.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a folder removed by hand during the turn, then a write beside it, then one inside it: the removal is the user\'s (found by a round-3 probe)', async () => {
    const w = await world();
    await w.write('D/E/g.txt', 'g\n');
    await w.write('D/E/h.txt', 'h\n');
    await w.write('T/u.txt', 'u\n');
    await w.session.scan({ rewriteIndex: 'always' }); // the index holds D/E and T (else the full scan answers anyway)
    await w.session.turn();
    const { s: s2, agent } = await afterClear(w);
    const atPrompt1 = await snapshot(w.root);
    await rm(w.at('D/E'), { recursive: true });
    await agent('D/other.txt', 'x\n'); // looks at D: a folder ckpt knew there is gone
    await agent('D/E/g.txt', 'G\n');
    await sleep(20); // a file-clock tick after the last event naming a path in the root
    await rm(w.at('T'), { recursive: true }); // the same at the top (the root's block of the index)
    await agent('other.txt', 'x\n');
    await agent('T/u.txt', 'U\n');
    await s2.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('parallel tool calls: a call in flight (captured, its atomic write done, not settled) is not taken for the user\'s change by the next call\'s look', async () => {
    const w = await world();
    await w.write('D/k.txt', 'k\n');
    await w.session.scan({ rewriteIndex: 'always' });
    await w.session.turn();
    await w.session.capture(['D/k.txt'], { tool: 'Write' }); // call A
    await sleep(20); // a file-clock tick: the folder's change is after A's capture
    await writeFile(w.at('D/.k.txt.tmp'), 'agent\n');
    await rename(w.at('D/.k.txt.tmp'), w.at('D/k.txt')); // A's atomic write changes the folder
    await w.session.capture(['D/x.txt'], { tool: 'Write' }); // call B
    await w.write('D/x.txt', 'x\n');
    await w.session.settle(['D/k.txt']);
    await w.session.settle(['D/x.txt']);
    const tools = (await w.session.events()).filter((e) => e.type === 'capture').map((e) => e.tool);
    expect(tools.filter((t) => t === 'user')).toEqual([]);
  });

  it('a restore with nothing to place still records what its look found (found by a preview probe)', async () => {
    const w = await world();
    await w.write('keep.txt', 'keep\n');
    await w.session.turn();
    await w.write('a.txt', 'by hand\n');
    await w.session.turn(); // its look records a.txt
    await rm(w.at('a.txt')); // by hand: as at turn 1 again
    const r = await w.session.restore('1');
    expect({ restored: r.restored, deleted: r.deleted, undo: r.undo }).toEqual({ restored: [], deleted: [], undo: null });
    const last = (await w.session.events()).filter((e) => e.type === 'capture').at(-1) as unknown as { tool: string; files: { path: string; state: string }[] };
    expect(last).toMatchObject({ tool: 'user', files: [{ path: 'a.txt', state: 'file' }] });
    expect((await w.session.scan()).files).toEqual([]); // nothing left for the next scan
  });

  it('the same for a file only the baseline knew (a git work tree\'s: its content in git until then)', async () => {
    const dirs = await makeTempDirs('ckpt-look-base-');
    const at = (rel: string) => join(dirs.workspace, rel);
    await writeFile(at('config.json'), '{"v":1}\n');
    spawnSync('git', ['init', '-q'], { cwd: dirs.workspace });
    spawnSync('git', ['add', '-A'], { cwd: dirs.workspace });
    spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'c1'], { cwd: dirs.workspace });
    await sleep(30); // the files are older than the baseline
    const store = await openStore({ dir: dirs.store });
    try {
      const ws = await store.openWorkspace(dirs.workspace);
      const session = await ws.create({ title: 'baseline only' });
      await session.turn();
      const atPrompt1 = await snapshot(dirs.workspace, ['.git']);
      await writeFile(at('config.json'), '{"v":2,"by":"hand"}\n');
      await session.capture(['config.json'], { tool: 'Edit' });
      await writeFile(at('config.json'), '{"v":3,"by":"agent"}\n');
      await session.settle(['config.json']);
      await session.restore('1', { force: true });
      expect(await snapshot(dirs.workspace, ['.git'])).toEqual(atPrompt1);
    } finally {
      await store.close();
    }
  });

  it('a hand change back to this session\'s own older record is still a change when another session recorded the path since', async () => {
    // Found by a gc/fork probe: A's last record of f is "absent", B then recorded f, the user deletes f:
    // the look took A's own record for the newest and restore 2 left f deleted.
    const w = await world();
    await w.write('f', 'v1\n');
    await w.session.turn();
    await w.tool(['f'], () => rm(w.at('f')), 'Bash');
    const b = await w.ws.create({ title: 'B' });
    await b.turn();
    await writeFile(w.at('f'), 'recorded by B\n');
    await b.turn();
    await w.session.turn();
    const atPrompt2 = await snapshot(w.root);
    await rm(w.at('f')); // by hand, no prompt since
    expect(await refusal(w.session.restore('2'))).toEqual({ code: 'DRIFT', drift: ['f'] });
    await w.session.restore('2', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt2);
  });

  it('a recorded folder replaced by a file by hand: the look reads the folder\'s files as gone (no ENOTDIR), the forced restore is exact', async () => {
    // Found by a daemon probe: every restore and preview of the session failed with IO ENOTDIR.
    const w = await world();
    await w.write('a.txt', 'a\n');
    await w.session.turn();
    const atPrompt1 = await snapshot(w.root);
    await w.write('x/cd/f.txt', 'f\n');
    await w.session.turn();
    await rm(w.at('x'), { recursive: true });
    await writeFile(w.at('x'), 'a file now\n');
    expect(await refusal(w.session.restore('1'))).toMatchObject({ code: 'DRIFT' });
    await w.session.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a capture never settled (an interrupted tool call) is not an outside change: restore runs, and its recovery tag holds the agent\'s write', async () => {
    const w = await world();
    await w.write('a.txt', 'a\n');
    await w.session.turn();
    await w.session.capture(['a.txt'], { tool: 'Write' });
    await writeFile(w.at('a.txt'), 'agent\n'); // no settle
    const r = await w.session.restore('1');
    expect(r.drift).toEqual([]);
    expect(await readFile(w.at('a.txt'), 'utf8')).toBe('a\n');
    await w.session.restore(r.undo!);
    expect(await readFile(w.at('a.txt'), 'utf8')).toBe('agent\n');
  });

  // D2 (2026-12-08): a call open across prompt 2, its path changed after prompt 2 (its write, or a
  // hand edit: ckpt cannot tell which). `restore 2` left it; now the path is put back — as drift,
  // since it may be the user's work: refused unless forced, and kept for the undo.
  it('a path whose call is still open since before the prompt restored to: drift, put back when forced, undone', async () => {
    const w = await world();
    await w.write('a.txt', 'a\n');
    await w.session.turn();
    await w.session.capture(['a.txt'], { tool: 'Write' }); // open: no settle yet
    await w.session.turn(); // 2: a.txt still 'a'
    await sleep(5);
    await writeFile(w.at('a.txt'), 'after prompt 2\n');
    expect(await refusal(w.session.restore('2'))).toEqual({ code: 'DRIFT', drift: ['a.txt'] });
    expect(await readFile(w.at('a.txt'), 'utf8')).toBe('after prompt 2\n');
    const r = await w.session.restore('2', { force: true });
    expect(await readFile(w.at('a.txt'), 'utf8')).toBe('a\n');
    await w.session.restore(r.undo!, { force: true });
    expect(await readFile(w.at('a.txt'), 'utf8')).toBe('after prompt 2\n');
  });

  // A real-Claude probe (2026-12-08): an open Write of a file in a new folder, restored to the prompt
  // before it: the file was the call's (no drift), but the folder it made was refused as drift.
  it('the folder an open call made for the file it writes goes with it: not drift', async () => {
    const w = await world();
    await w.write('a.txt', 'a\n');
    await w.session.turn();
    const atPrompt1 = await snapshot(w.root);
    await w.session.turn();
    await w.session.capture(['newdir/slow.txt'], { tool: 'Write' }); // open: no settle yet
    await mkdir(w.at('newdir'));
    await writeFile(w.at('newdir/slow.txt'), 'written, not settled\n');
    const r = await w.session.restore('1');
    expect(r.drift).toEqual([]);
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('what a tool took away with a folder it captured is put back, and is not drift', async () => {
    const w = await world();
    await w.write('d/x.txt', 'x\n');
    await w.write('d/e/y.txt', 'y\n');
    await w.session.turn();
    const atPrompt1 = await snapshot(w.root);
    await w.tool(['d'], () => rm(w.at('d'), { recursive: true })); // the capture names the folder only
    const r = await w.session.restore('1');
    expect(r.drift).toEqual([]);
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a path-filtered restore records the whole look: the folders a hand edit brought go with a later restore, its undo is exact', async () => {
    const w = await world();
    await w.write('a.txt', 'a\n');
    await w.write('b.txt', 'b\n');
    await w.session.turn();
    const atPrompt1 = await snapshot(w.root);
    await w.tool(['a.txt'], () => w.write('a.txt', 'agent\n'));
    await mkdir(w.at('n/m'), { recursive: true });
    await writeFile(w.at('n/m/f.txt'), 'f\n');
    await writeFile(w.at('b.txt'), 'by hand\n');
    const handState = await snapshot(w.root);
    const one = await w.session.undo('1', 'n/m/f.txt', { force: true });
    expect(one.deleted).toEqual(['n/m/f.txt']);
    // The undo of the filtered restore: b.txt's hand edit, left by it, is not drift.
    await w.session.restore(one.undo!);
    expect(await snapshot(w.root)).toEqual(handState);
    await w.session.restore('1', { force: true });
    expect(await snapshot(w.root)).toEqual(atPrompt1);
  });

  it('a hand deletion before an N.K tag stays (its folder is older); a folder moved in by hand goes whole', async () => {
    const w = await world();
    await w.write('a.txt', 'a\n');
    await w.write('gone/x.txt', 'x\n');
    await w.write('d/y.txt', 'y\n');
    await w.session.turn();
    await rm(w.at('gone/x.txt'));
    await new Promise((r) => setTimeout(r, 2_200)); // past the clock slack
    const at11 = await snapshot(w.root);
    const tag = await w.tool(['a.txt'], () => writeFile(w.at('a.txt'), 'agent\n'));
    await rename(w.at('d'), w.at('d2')); // d2/y.txt keeps its old ctime
    await w.session.restore(tag, { force: true });
    expect(await snapshot(w.root)).toEqual(at11);
  });

  it('a folder replaced by hand with a symlink to an older folder: what it held is looked at beneath the link, never through it', async () => {
    const w = await world();
    await w.write('other/x', 'older\n');
    await w.write('d/x', 'x1\n');
    await new Promise((r) => setTimeout(r, 2_200)); // other/x older than prompt 2 by more than the clock slack
    await w.session.turn();
    await w.tool(['d/x'], () => writeFile(w.at('d/x'), 'x2\n'));
    const at2 = await snapshot(w.root);
    await w.session.turn();
    await rm(w.at('d'), { recursive: true });
    await symlink('other', w.at('d')); // d/x now resolves to other/x, an old inode
    const r = await w.session.restore('2', { force: true });
    expect(r.drift.slice().sort()).toEqual(['d', 'd/x']);
    expect(await snapshot(w.root)).toEqual(at2);
  });

  it('leaves a change made before the tag (its inode is older), and looks at nothing when the turns never scanned', async () => {
    const w = await world();
    await w.session.turn();
    await writeFile(w.at('early.txt'), 'by hand before the agent\'s first call\n');
    await new Promise((r) => setTimeout(r, 2_200)); // past the clock slack
    const tag = await w.tool(['a.txt'], () => w.write('a.txt', 'agent\n'));
    await writeFile(w.at('late.txt'), 'by hand after\n');
    // At 1.1 (just before the agent's call) early.txt was there: only late.txt is drift.
    expect(await refusal(w.session.restore(tag))).toEqual({ code: 'DRIFT', drift: ['late.txt'] });
    await w.session.restore(tag, { force: true });
    expect(await readFile(w.at('early.txt'), 'utf8')).toContain('before the agent');
    await expect(readFile(w.at('late.txt'))).rejects.toMatchObject({ code: 'ENOENT' });

    // A turn started without a scan (the library's startTurn, as a caller that records nothing):
    // ckpt cannot tell when a later hand edit was made, so the restore leaves it, as it always did.
    const v = await world();
    await v.turn();
    await v.tool(['b.txt'], () => v.write('b.txt', 'agent\n'));
    await writeFile(v.at('notes.txt'), 'by hand\n');
    const r = await v.session.restore('1');
    expect(r.deleted).toEqual(['b.txt']);
    expect(await readFile(v.at('notes.txt'), 'utf8')).toBe('by hand\n');
  });

  it('over MCP, a forced preview and its token restore hand edits too (the plan does not move between them)', async () => {
    const dirs = await makeTempDirs('ckpt-look-mcp-');
    const mcp = await startMcp({ store: dirs.store, workspace: dirs.workspace });
    try {
      const at = (rel: string) => join(dirs.workspace, rel);
      await writeFile(at('a.txt'), 'one\n');
      await mcp.ok('session_new', {});
      await mcp.ok('turn', {});
      await mcp.ok('checkpoint', { paths: ['a.txt'], tool: 'Edit' });
      await writeFile(at('a.txt'), 'two\n');
      await mcp.ok('settle', { paths: ['a.txt'] });
      await writeFile(at('notes.txt'), 'by hand\n');

      const plain = await mcp.ok('restore_preview', { tag: '1' });
      expect(plain.wouldRefuse).toEqual({ code: 'DRIFT', paths: ['notes.txt'] });
      const preview = await mcp.ok('restore_preview', { tag: '1', force: true });
      expect(preview.plan).toEqual(expect.arrayContaining([{ path: 'notes.txt', action: 'delete' }, { path: 'a.txt', action: 'write' }]));
      const done = await mcp.ok('restore', { tag: '1', force: true, token: preview.token });
      expect(done.deleted).toEqual(['notes.txt']);
      expect(await readFile(at('a.txt'), 'utf8')).toBe('one\n');
      await expect(readFile(at('notes.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await mcp.close();
      await dirs.cleanup();
    }
  });
});
