// Two "machines" on one shared store (issue 17): separate processes with their own machine ids and
// workspace folders, the same store URL. One works while the other forks its session and restores
// that history into its own folder; neither's folder, log or scan index is touched by the other.
// Runs under `npm run test:shared` (the local-id check runs always).
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import { runCli } from './helpers/cli.js';
import { dropSharedStore, freshSharedUrl, SHARED_BASE } from './helpers/shared-store.js';

const describeShared = SHARED_BASE ? describe : describe.skip;

let base: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'ckpt-2m-'));
});
afterEach(() => rm(base, { recursive: true, force: true }));

describe('workspace identity', () => {
  it('keeps the local store id of a workspace: sha256 of its real path, no machine id', async () => {
    const ws = join(base, 'ws');
    await mkdir(ws);
    const store = await openStore({ dir: join(base, 'store') });
    const opened = await store.openWorkspace(ws);
    expect(opened.id).toBe(createHash('sha256').update(await realpath(ws)).digest('hex').slice(0, 20));
    expect((await store.listWorkspaces())[0]).not.toHaveProperty('machine');
  });
});

describeShared('two machines sharing a store', () => {
  let url: string;
  beforeEach(() => {
    url = freshSharedUrl();
  });
  afterEach(() => dropSharedStore(url));

  it('give the same path on two machines two workspaces with separate scan indexes', async () => {
    const folder = join(base, 'clone');
    await mkdir(folder);
    await writeFile(join(folder, 'x.txt'), 'x');
    const saved = process.env.CKPT_MACHINE_ID;
    const opened = [];
    try {
      for (const machine of ['m-one', 'm-two']) {
        process.env.CKPT_MACHINE_ID = machine;
        const store = await openStore({ dir: url });
        const ws = await store.openWorkspace(folder);
        await (await ws.create()).scan();
        opened.push({ store, ws });
      }
    } finally {
      if (saved === undefined) delete process.env.CKPT_MACHINE_ID;
      else process.env.CKPT_MACHINE_ID = saved;
    }
    const [one, two] = opened as [(typeof opened)[0], (typeof opened)[0]];
    expect(one.ws.id).not.toBe(two.ws.id);
    expect(one.ws.root).toBe(two.ws.root);
    const backend = one.store.ctx.backend;
    expect(await backend.list(`workspaces/${one.ws.id}`)).toContain(`workspaces/${one.ws.id}/scan-index.bin`);
    expect(await backend.list(`workspaces/${two.ws.id}`)).toContain(`workspaces/${two.ws.id}/scan-index.bin`);
    expect((await one.store.listWorkspaces()).map((w) => w.machine).sort()).toEqual(['m-one', 'm-two']);
    await Promise.all(opened.map((o) => o.store.close()));
  });

  it("refuses to remove another machine's workspace (WRONG_MACHINE, nothing removed) unless --other-machine (round-6 probe)", async () => {
    const folder = join(base, 'proj');
    await mkdir(folder);
    await writeFile(join(folder, 'x.txt'), 'x');
    const cli = (machine: string, ...args: string[]) => runCli(['--json', ...args], { cwd: folder, env: { CKPT_STORE: url, CKPT_MACHINE_ID: machine } });
    expect((await cli('m-one', 'session', 'new')).code).toBe(0);
    const id = (await cli('m-one', 'workspace', 'list')).json().workspaces[0].id as string;
    const refused = await cli('m-two', 'workspace', 'rm', id, '--yes');
    expect(refused.code, refused.stderr).toBe(4);
    expect(JSON.parse(refused.stderr).error).toMatchObject({ code: 'WRONG_MACHINE', data: { workspace: id, machine: 'm-one' } });
    expect((await cli('m-one', 'log')).code).toBe(0); // its history is there
    const removed = await cli('m-two', 'workspace', 'rm', id, '--yes', '--other-machine');
    expect(removed.code, removed.stderr).toBe(0);
    expect((await cli('m-one', 'workspace', 'list')).json().workspaces).toEqual([]);
  });

  it("one machine restores the other's session into its own folder while the other keeps working", async () => {
    const a = join(base, 'machine-a', 'repo');
    const b = join(base, 'machine-b', 'repo');
    await mkdir(a, { recursive: true });
    await mkdir(b, { recursive: true });
    const cli = (cwd: string, machine: string) => async (...args: string[]) => {
      const r = await runCli(['--json', ...args], { cwd, env: { CKPT_STORE: url, CKPT_MACHINE_ID: machine, CKPT_RETENTION: 'off' } });
      expect(r.code, `${machine}: ckpt ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.json();
    };
    const A = cli(a, 'machine-a');
    const B = cli(b, 'machine-b');
    const edit = async (rel: string, content: string) => {
      await A('capture', rel);
      await writeFile(join(a, rel), content);
      await A('settle', rel);
    };

    await writeFile(join(a, 'f.txt'), 'v1');
    await A('session', 'new', '--id', 'agent-a');
    await A('turn');
    await edit('f.txt', 'v2');
    await A('turn');
    await edit('f.txt', 'v3');
    await edit('g.txt', 'made in turn 2');

    const listed = (await B('workspace', 'list')).workspaces as { id: string; root: string; machine?: string }[];
    const wa = listed.find((w) => w.machine === 'machine-a')!;
    expect(wa.root).toBe(await realpath(a));

    // At once: A keeps capturing in its session; B forks it and restores turn 2's start into b/.
    const aWork = (async () => {
      await A('turn');
      for (let i = 0; i < 4; i++) await edit(`h${i}.txt`, `h${i}`);
    })();
    const bWork = (async () => {
      const fork = await B('session', 'fork', 'agent-a', '--from-workspace', wa.id);
      expect(fork.session).toMatchObject({ kind: 'fork', forkedFrom: { session: 'agent-a', workspace: wa.id } });
      expect(fork.session).not.toHaveProperty('parent');
      // b/ has none of a's files: the restore overwrites what its fork last saw, hence --force.
      return B('--session', fork.session.id, 'restore', '2', '--force', '--yes');
    })();
    const [, restored] = await Promise.all([aWork, bWork]);
    expect(restored.restored).toEqual(['f.txt']);

    expect(await readFile(join(b, 'f.txt'), 'utf8')).toBe('v2');
    expect((await readdir(b)).sort()).toEqual(['f.txt']);
    // A's folder and log are its own: nothing of B's restore reached them.
    expect(await readFile(join(a, 'f.txt'), 'utf8')).toBe('v3');
    expect((await readdir(a)).sort()).toEqual(['f.txt', 'g.txt', 'h0.txt', 'h1.txt', 'h2.txt', 'h3.txt']);
    const events = (await A('conversation', 'show', '--all')).events as { type: string }[];
    expect(events.some((e) => e.type.startsWith('restore'))).toBe(false);
    const log = (await A('log')).checkpoints as { tag: string }[];
    expect(log.map((c) => c.tag)).toEqual(['1.1', '2.1', '2.2', '3.1', '3.2', '3.3', '3.4']);
    // And B's own history has the restore, undoable there.
    const bLog = (await B('log')).checkpoints as { tag: string; tool?: string }[];
    expect(bLog.length).toBeGreaterThan(3);
  });
});
