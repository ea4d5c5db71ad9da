// `ckpt store copy FROM TO` (issue 17): a store moved between drivers keeps every session usable —
// same checkpoints, restores that work — and the copy is verified. Folder → folder always runs;
// folder → shared → folder runs under `npm run test:shared`.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyStore } from '../src/gc/copy-store.js';
import { createEventLog } from '../src/storage/event-log.js';
import { openStore } from '../src/store.js';
import { runCli } from './helpers/cli.js';
import { dropSharedStore, freshSharedUrl, SHARED_BASE } from './helpers/shared-store.js';

const describeShared = SHARED_BASE ? describe : describe.skip;

let base: string;
let ws: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'ckpt-copy-'));
  ws = join(base, 'ws');
  await mkdir(ws);
});
afterEach(() => rm(base, { recursive: true, force: true }));

/** A store with a baseline scan (packs), captures (loose blobs) over two turns. */
async function populate(env: NodeJS.ProcessEnv): Promise<void> {
  const ckpt = async (...args: string[]) => {
    const r = await runCli(['--json', ...args], { cwd: ws, env });
    expect(r.code, `ckpt ${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.json();
  };
  for (let i = 0; i < 20; i++) await writeFile(join(ws, `file${i}.txt`), `content ${i}\n`.repeat(i + 1));
  await ckpt('session', 'new', '--id', 'copied');
  await ckpt('scan');
  await ckpt('turn');
  await ckpt('capture', 'file1.txt');
  await writeFile(join(ws, 'file1.txt'), 'changed');
  await ckpt('settle', 'file1.txt');
  await ckpt('turn');
  await ckpt('capture', 'file2.txt');
  await writeFile(join(ws, 'file2.txt'), 'changed too');
  await ckpt('settle', 'file2.txt');
}

describe('store copy between folders', () => {
  it('copies every object, verifies the copy, and refuses a destination that is not empty', async () => {
    const env = { CKPT_STORE: join(base, 'a'), CKPT_RETENTION: 'off' };
    await populate(env);
    const from = await openStore({ dir: join(base, 'a') });
    const to = await openStore({ dir: join(base, 'b') });
    const result = await copyStore(from.ctx, to.ctx);
    expect(result).toMatchObject({ verified: true, problems: [] });
    expect(result.objects).toBe((await from.ctx.backend.list('')).length - 1);
    const copied = await (await to.openWorkspace(ws)).get('copied');
    expect((await copied.events()).map((e) => e.type)).toEqual((await (await (await from.openWorkspace(ws)).get('copied')).events()).map((e) => e.type));
    await copied.restore('1', { force: true });
    expect(await readFile(join(ws, 'file1.txt'), 'utf8')).toBe('content 1\n'.repeat(2));
    await expect(copyStore(from.ctx, to.ctx)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('a store holding an interrupted restore copies as verified, the restore listed (a probe: a faithful copy failed BLOB_CORRUPT)', async () => {
    const env = { CKPT_STORE: join(base, 'a'), CKPT_RETENTION: 'off' };
    await populate(env);
    const from = await openStore({ dir: join(base, 'a') });
    const wid = (await from.openWorkspace(ws)).id;
    // What a restore killed after its journal leaves: restore_started without its commit.
    await createEventLog({ backend: from.ctx.backend, key: `workspaces/${wid}/sessions/copied/events.jsonl` }).append([{ type: 'restore_started', id: 'r1', to: '1', recovery: '2.2', plan: [] }]);
    await rm(join(base, 'a', 'workspaces', wid, 'sessions', 'copied', 'metadata.json'));
    const r = await runCli(['store', 'copy', join(base, 'a'), join(base, 'b'), '--json'], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ verified: true, problems: [{ kind: 'restore_interrupted', session: 'copied', id: 'r1' }] });
  });

  it('a source that is no store (a typo) is NOT_FOUND, and neither folder is made', async () => {
    const r = await runCli(['store', 'copy', join(base, 'typo'), join(base, 'dest'), '--json'], { cwd: ws });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stderr).error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('no ckpt store at') });
    expect(existsSync(join(base, 'typo')) || existsSync(join(base, 'dest'))).toBe(false);
  });
});

describeShared('store copy between a folder and a shared store', () => {
  let url: string;
  beforeEach(() => {
    url = freshSharedUrl();
  });
  afterEach(() => dropSharedStore(url));

  it('moves a folder store to a shared one and back; sessions keep their history and restore', async () => {
    const env = { CKPT_RETENTION: 'off', CKPT_MACHINE_ID: 'copy-machine' };
    const local = join(base, 'local');
    await populate({ ...env, CKPT_STORE: local });
    const ckpt = async (store: string, ...args: string[]) => {
      const r = await runCli(['--json', '--store', store, ...args], { cwd: ws, env });
      expect(r.code, `ckpt ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.json();
    };
    const before = (await ckpt(local, 'log')).checkpoints;
    const up = await ckpt(local, 'store', 'copy', local, url);
    expect(up).toMatchObject({ verified: true, problems: [] });
    expect(JSON.stringify(up)).not.toContain('AWS_SECRET');
    // Opened by URL on this machine, the workspace is the same folder's (its id re-keyed with the machine).
    expect((await ckpt(url, 'log')).checkpoints).toEqual(before);
    const restored = await ckpt(url, 'restore', '1', '--force', '--yes');
    expect(restored.restored).toEqual(expect.arrayContaining(['file1.txt']));
    expect(await readFile(join(ws, 'file1.txt'), 'utf8')).toBe('content 1\n'.repeat(2));
    const back = join(base, 'back');
    expect(await ckpt(url, 'store', 'copy', url, back)).toMatchObject({ verified: true });
    const afterRestore = (await ckpt(url, 'log')).checkpoints;
    expect((await ckpt(back, 'log')).checkpoints).toEqual(afterRestore);
  });
});
