// A tool call that straddles a prompt (DESIGN §10 "A tool call across a prompt"): its PreToolUse comes
// before prompt N+1 and its write after — a background subagent still writing when the user sends the
// next prompt. `restore N+1` must give the tree at prompt N+1, so the write is undone; a write made
// before the prompt (the prompt's scan saw it) stays.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type Workspace } from '../src/index.js';
import type { Session } from '../src/api/session.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let ws: Workspace;
let session: Session;
const w = (rel: string) => join(dirs.workspace, rel);
const prompt = (text: string) => session.turn({ text, scan: (tool) => session.scan({ tool }) });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-straddle-');
  store = await openStore({ dir: dirs.store });
  ws = await store.openWorkspace(dirs.workspace);
  await writeFile(w('f.txt'), 'S0');
  session = await ws.create({ title: 'straddle' });
});
afterEach(async () => {
  await store.close();
  await dirs.cleanup();
});

describe('a tool call across a prompt', () => {
  it('written after prompt 2: restore 2 undoes the write, restore 1 too, and the undo gives it back', async () => {
    await prompt('one');
    await session.capture(['f.txt'], { tool: 'Write', callId: 'bg-1' });
    await prompt('two');
    await writeFile(w('f.txt'), 'S1');
    await session.settle(['f.txt'], { callId: 'bg-1' });
    const r = await session.restore('2');
    expect(await readFile(w('f.txt'), 'utf8')).toBe('S0');
    await session.restore(r.undo!);
    expect(await readFile(w('f.txt'), 'utf8')).toBe('S1');
    await session.restore('1');
    expect(await readFile(w('f.txt'), 'utf8')).toBe('S0');
  });

  // A hook property seed: the fork holds the call's first capture as a copy, so on its timeline the
  // capture recorded at the settle (movedFrom) is the call's record, at its own time.
  it('a fork at 2, then the write after prompt 2 in the parent: the fork\'s restore 2 undoes it', async () => {
    await prompt('one');
    await session.capture(['f.txt'], { tool: 'Write', callId: 'bg-1' });
    await prompt('two');
    const fork = await ws.get((await ws.fork(session.id, { atTag: '2' })).id);
    await writeFile(w('f.txt'), 'S1');
    await session.settle(['f.txt'], { callId: 'bg-1' });
    await fork.restore('2', { force: true });
    expect(await readFile(w('f.txt'), 'utf8')).toBe('S0');
  });

  it('written before prompt 2 (its scan saw it): restore 2 keeps the write, restore 1 undoes it', async () => {
    await prompt('one');
    await session.capture(['f.txt'], { tool: 'Write', callId: 'bg-1' });
    await writeFile(w('f.txt'), 'S1');
    await prompt('two');
    await session.settle(['f.txt'], { callId: 'bg-1' });
    await writeFile(w('g.txt'), 'later'); // something of turn 2, so restore 2 has work
    await session.capture(['g.txt'], { tool: 'Write' });
    await session.restore('2', { force: true });
    expect(await readFile(w('f.txt'), 'utf8')).toBe('S1');
    await session.restore('1', { force: true });
    expect(await readFile(w('f.txt'), 'utf8')).toBe('S0');
  });
});

// A race probe (2026-12-07): two agents in one folder, B's tool call in flight while the user prompts A.
describe("another session's tool call across a prompt", () => {
  it("B captures, A's prompt 1, B writes and settles: A's restore 1 undoes B's write; a write B made before A's prompt stays", async () => {
    await writeFile(w('k.txt'), 'keep');
    const b = await ws.create({ title: 'agent B' });
    await b.turn({ text: 'b one', scan: (tool) => b.scan({ tool }) });
    await b.capture(['f.txt', 'k.txt'], { tool: 'Write', callId: 'b-1' });
    await new Promise((r) => setTimeout(r, 5));
    await prompt('one'); // A's prompt 1: f = S0, k = keep
    await writeFile(w('f.txt'), 'by B');
    await rm(w('k.txt'));
    await b.settle(['f.txt', 'k.txt'], { callId: 'b-1' });
    await prompt('two');
    await session.restore('1', { force: true });
    expect(await readFile(w('f.txt'), 'utf8')).toBe('S0');
    expect(await readFile(w('k.txt'), 'utf8')).toBe('keep');
    // Written before A's prompt 3 (its scan records it): restore 3 keeps it.
    await b.capture(['f.txt'], { tool: 'Write', callId: 'b-2' });
    await writeFile(w('f.txt'), 'by B again');
    await new Promise((r) => setTimeout(r, 5));
    await prompt('three');
    await b.settle(['f.txt'], { callId: 'b-2' });
    await session.restore('3', { force: true });
    expect(await readFile(w('f.txt'), 'utf8')).toBe('by B again');
  });
});
