// S3 unreachable for a while (issue 33): the store's S3 endpoint is reached through a TCP proxy the
// test cuts (connections refused) and then blackholes (accepted, never answered: a partition only
// the client's timeouts notice). While S3 is away, commands that need it fail soon with IO (exit 6,
// a message naming the object store) and leave nothing half-written: no event, no restore journal,
// the workspace untouched, no PostgreSQL row naming an S3 object that is not there (`verify`), and
// after `gc --grace 0s` no leftovers. What needs only PostgreSQL (the log) still works. Once S3 is
// back the same commands work. Runs under `npm run test:shared`.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verify, type Store } from '../src/index.js';
import { parseSharedStoreUrl } from '../src/storage/shared/store-url.js';
import { runCli } from './helpers/cli.js';
import { dropSharedStore, freshSharedUrl, openAsMachine, SHARED_BASE } from './helpers/shared-store.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';

const describeShared = SHARED_BASE ? describe : describe.skip;
/** A bound on giving up on an unreachable S3 (the driver: ~2 x 8 s idle timeouts; 27 s seen under load 21): no hang. */
const GIVE_UP_MS = 60_000;

describeShared('S3 unreachable for a while (shared store)', () => {
  let url: string;
  let base: string;
  let proxy: TcpProxy;
  let store: Store | undefined;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'ckpt-s3-outage-'));
    url = freshSharedUrl();
    const endpoint = new URL(parseSharedStoreUrl(url).endpoint!);
    proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
    const viaProxy = new URL(url);
    viaProxy.searchParams.set('endpoint', `http://127.0.0.1:${proxy.port}`);
    url = viaProxy.href;
  });
  afterEach(async () => {
    await proxy.set('up');
    await store?.close();
    store = undefined;
    await dropSharedStore(url);
    await proxy.close();
    await rm(base, { recursive: true, force: true });
  });

  it('commands that need S3 fail soon with IO and write nothing; after it is back they work; verify clean', async () => {
    const ws = join(base, 'a');
    await mkdir(ws);
    const ckpt = (...args: string[]) =>
      runCli(['--json', '--session', 'main', ...args], { cwd: ws, env: { CKPT_STORE: url, CKPT_MACHINE_ID: 'm-a', CKPT_RETENTION: 'off' } });
    const ok = async (...args: string[]) => {
      const r = await ckpt(...args);
      expect(r.code, `ckpt ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.json();
    };
    // Content over the inline limit (64 KiB): its before-image must go to S3.
    const big = (v: string): string => `${v}\n`.repeat(40_000);
    await writeFile(join(ws, 'big.txt'), big('v1'));
    await writeFile(join(ws, 'small.txt'), 's1');
    await ok('session', 'new', '--id', 'main');
    await ok('turn');
    await ok('capture', 'big.txt', 'small.txt');
    await writeFile(join(ws, 'big.txt'), big('v2'));
    await writeFile(join(ws, 'small.txt'), 's2');
    await ok('settle', 'big.txt', 'small.txt');
    await ok('turn');
    const eventsBefore = ((await ok('conversation', 'show', '--all')).events as unknown[]).length;
    store = await openAsMachine(url, 'm-b');

    for (const mode of ['refuse', 'blackhole'] as const) {
      await proxy.set(mode);
      // New content the store does not hold: the capture must put it to S3 before its event.
      await writeFile(join(ws, 'big.txt'), big(`v3 ${mode}`));
      // (A blackholed request costs its timeouts, ~20 s: the restore is cut off by refusal only.)
      for (const args of mode === 'refuse' ? [['capture', 'big.txt'], ['restore', '1', '--yes', '--force']] : [['capture', 'big.txt']]) {
        const t0 = Date.now();
        const r = await ckpt(...args);
        const took = Date.now() - t0;
        const what = `S3 ${mode}: ckpt ${args.join(' ')}`;
        expect(r.code, `${what}: ${r.stderr}`).toBe(6);
        const err = JSON.parse(r.stderr.trim().split('\n').pop()!) as { error: { code: string; message: string; data?: { retryable?: boolean } } };
        expect(err.error.code, what).toBe('IO');
        expect(err.error.message, what).toMatch(/object store/);
        expect(took, `${what} took ${took} ms`).toBeLessThan(GIVE_UP_MS);
        process.stdout.write(`${what}: exit ${r.code} after ${took} ms: ${err.error.message.slice(0, 160)}\n`);
      }
      // Nothing written: no new event, the workspace as it was, the log readable (PostgreSQL only),
      // at once (the bucket check that cannot finish is not waited for).
      const t0 = Date.now();
      const events = (await ok('conversation', 'show', '--all')).events as { type: string }[];
      const took = Date.now() - t0;
      process.stdout.write(`S3 ${mode}: ckpt conversation show (PostgreSQL only) took ${took} ms\n`);
      expect(took).toBeLessThan(GIVE_UP_MS / 3);
      expect(events.length, `S3 ${mode}: events after the failed commands`).toBe(eventsBefore);
      expect(await readFile(join(ws, 'big.txt'), 'utf8')).toBe(big(`v3 ${mode}`));
      expect(await readFile(join(ws, 'small.txt'), 'utf8')).toBe('s2');
      await proxy.set('up');
    }

    // A long-lived process (a daemon, the library) whose bucket check is done: the put and the get
    // themselves fail.
    const live = await openAsMachine(url, 'm-a');
    try {
      const session = await (await live.openWorkspace(ws)).get('main');
      await writeFile(join(ws, 'big.txt'), big('v4'));
      await session.capture(['big.txt']);
      await writeFile(join(ws, 'big.txt'), big('v5'));
      const seqBefore = (await session.events()).length;
      await proxy.set('refuse');
      await expect(session.capture(['big.txt'])).rejects.toMatchObject({ code: 'IO', message: expect.stringMatching(/object store.*put/) });
      await expect(session.restore('1', { force: true })).rejects.toMatchObject({ code: 'IO', message: expect.stringMatching(/object store/) });
      expect((await session.events()).length).toBe(seqBefore);
      expect(await readFile(join(ws, 'big.txt'), 'utf8')).toBe(big('v5'));
      await proxy.set('up');
      await session.capture(['big.txt']);
    } finally {
      await live.close();
    }

    // Back: the same commands work, and every row's S3 object is there.
    const captured = await ok('capture', 'big.txt');
    expect(captured).toBeTruthy();
    const restored = await ok('restore', '1', '--yes', '--force');
    expect(restored.restored.sort()).toEqual(['big.txt', 'small.txt']);
    expect(await readFile(join(ws, 'big.txt'), 'utf8')).toBe(big('v1'));
    expect(await readFile(join(ws, 'small.txt'), 'utf8')).toBe('s1');
    expect((await verify(store.ctx)).problems).toEqual([]);
    await ok('gc', '--grace', '0s');
    expect(await store.ctx.backend.leftovers()).toEqual([]);
    expect((await verify(store.ctx)).problems).toEqual([]);
  }, 300_000);
});
