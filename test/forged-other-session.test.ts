// Another session's damaged or forged log in the same workspace (a hostile-store probe, 2026-12-08):
// every session's restore reads every session's records (workspace-timeline.ts), and one left out made
// `restore 1` of A exit 0 with B's later write still there. Now the restore fails LOG_CORRUPT naming
// the damaged session, nothing changed — as a removed session's damaged kept file already did.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/store.js';
import type { Session } from '../src/api/session.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let a: Session;

async function sessionDir(id: string): Promise<string> {
  const wsDir = join(dirs.store, 'workspaces');
  const [wid] = await readdir(wsDir);
  return join(wsDir, wid!, 'sessions', id);
}

/** Rewrites session `id`'s log line by line (lines parsed; `edit` may change them in place). */
async function editLog(id: string, edit: (lines: Record<string, unknown>[]) => void): Promise<void> {
  const file = join(await sessionDir(id), 'events.jsonl');
  const lines = (await readFile(file, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  edit(lines);
  await writeFile(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
}

const read = (name: string) => readFile(join(dirs.workspace, name), 'utf8');

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-forged-other-');
  store = await openStore({ dir: dirs.store, retention: false });
  const ws = await store.openWorkspace(dirs.workspace);
  await writeFile(join(dirs.workspace, 'a.txt'), 'a0');
  await writeFile(join(dirs.workspace, 'b.txt'), 'b0');
  a = await ws.create({ id: 'sA' });
  await a.turn(); // A's prompt 1: a0, b0
  await new Promise((r) => setTimeout(r, 5));
  // B's two calls after A's prompt 1, each its own call id.
  const b = await ws.create({ id: 'sB' });
  await b.turn();
  for (const [k, content] of [[1, 'b1'], [2, 'b2']] as const) {
    await b.capture(['b.txt'], { tool: 'Write', callId: `call-${k}` });
    await writeFile(join(dirs.workspace, 'b.txt'), content);
    await b.settle(['b.txt']);
  }
});
afterEach(async () => {
  await store.close();
  await dirs.cleanup();
});

/** A's restore 1 (dry run and real) fails LOG_CORRUPT naming `what`, and changes nothing. */
async function refuses(what: RegExp): Promise<void> {
  await expect(a.restore('1', { dryRun: true })).rejects.toMatchObject({ code: 'LOG_CORRUPT', message: what });
  await expect(a.restore('1', { force: true })).rejects.toMatchObject({ code: 'LOG_CORRUPT', message: what });
  expect(await read('b.txt')).toBe('b2');
}

describe("another session's damaged log", () => {
  it('is read as it is when sound: the check below is not vacuous', async () => {
    await a.restore('1', { force: true });
    expect(await read('b.txt')).toBe('b0');
  });

  it('a malformed line: the restore fails naming its file (it left the session out)', async () => {
    await editLog('sB', (lines) => {
      lines.splice(2, 1, { garbage: true });
    });
    await refuses(/sB/);
  });

  it('one corrupt session with no metadata does not hide the others: the restore fails naming it', async () => {
    const ws = await store.openWorkspace(dirs.workspace);
    const c = await ws.create({ id: 'sC' });
    await c.turn();
    await editLog('sC', (lines) => {
      lines[1]!.seq = 7;
    });
    await rm(join(await sessionDir('sC'), 'metadata.json'), { force: true });
    await refuses(/sC/);
  });

  it('an event whose time is no time', async () => {
    await editLog('sB', (lines) => {
      lines.find((l) => l.type === 'capture')!.at = '';
    });
    await refuses(/invalid at/);
  });
});

describe('a forged movedFrom', () => {
  const cases: [string, (captures: Record<string, unknown>[]) => void][] = [
    ['naming itself', ([first]) => void (first!.movedFrom = first!.tag)],
    ['naming a later capture', ([first, second]) => void (first!.movedFrom = second!.tag)],
    ["naming an earlier capture of another call", ([first, second]) => void (second!.movedFrom = first!.tag)],
    ['naming no capture', ([first]) => void (first!.movedFrom = '9.9')],
  ];
  for (const [name, forge] of cases) {
    it(`${name}: LOG_CORRUPT (it hid a real capture from A's timeline)`, async () => {
      await editLog('sB', (lines) => forge(lines.filter((l) => l.type === 'capture')));
      await refuses(/movedFrom/);
    });
  }
});
