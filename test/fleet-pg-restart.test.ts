// PostgreSQL restarted mid-run (issue 33), on a private cluster (test/helpers/pg-server.ts: the other
// shared suites run in parallel on the common one). Machine A runs CLI commands in loops (turn,
// capture, settle; one session per loop), machine B records through the library (one long-lived
// process, as an agent host or a daemon is) and serves the daemon whose SSE stream the test reads.
// `pg_ctl restart -m fast` terminates every connection mid-run. Then: every command either worked or
// failed with IO (exit 6, retryable; or LOCKED, exit 7, when a held lock's connection broke after the
// work under it was done) — no other code, no crash, no hang; every loop's next commands work; B's
// library calls fail with IO only and work again; the daemon's LISTEN feed reconnects and a turn
// appended after the restart reaches its SSE stream; its REST API answers; `verify` is clean and
// every log is dense. Runs under `npm run test:shared`.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { verify } from '../src/index.js';
import { CKPT_BIN } from './helpers/cli.js';
import { startPgServer, type PgServer } from './helpers/pg-server.js';
import { readSse } from './helpers/http.js';
import { dropSharedStore, freshSharedUrl, openAsMachine, SHARED_BASE } from './helpers/shared-store.js';

const describeShared = SHARED_BASE ? describe : describe.skip;
const LOOPS = 3;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  args: string;
  code: number;
  error?: string;
  message?: string;
  start: number;
  end: number;
}

function ckpt(cwd: string, url: string, args: string[]): Promise<Outcome> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CKPT_BIN, '--json', ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', CKPT_STORE: url, CKPT_MACHINE_ID: 'm-a', CKPT_RETENTION: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const out: Outcome = { args: args.join(' '), code: code ?? -1, start, end: Date.now() };
      if (code !== 0) {
        try {
          const e = (JSON.parse(stderr.trim().split('\n').pop()!) as { error: { code: string; message: string } }).error;
          out.error = e.code;
          out.message = e.message;
        } catch {
          out.message = stderr.slice(0, 300);
        }
      }
      resolve(out);
    });
  });
}

/** The daemon's SSE stream: event names and data as they arrive. */
function listen(daemon: RunningDaemon) {
  const got: { at: number; event: string; data: string }[] = [];
  const req = readSse(daemon.url, daemon.token, '/events', (e) => {
    if (e.event) got.push({ at: Date.now(), event: e.event, data: e.data });
  });
  return { got, close: () => req.destroy() };
}

async function getJson(daemon: RunningDaemon, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL(path, daemon.url), { headers: { authorization: `Bearer ${daemon.token}` } });
  return { status: res.status, body: await res.json() };
}

describeShared('PostgreSQL restarted mid-run (shared store)', () => {
  let server: PgServer;
  let url: string;
  let base: string;
  const savedState = process.env.XDG_STATE_HOME;
  beforeAll(async () => {
    server = startPgServer();
    // The common S3 server, this cluster's database.
    const common = new URL(freshSharedUrl());
    const own = new URL(server.url);
    own.search = common.search;
    url = own.href;
    base = await mkdtemp(join(tmpdir(), 'ckpt-pg-restart-'));
    process.env.XDG_STATE_HOME = join(base, 'state');
  }, 120_000);
  afterAll(async () => {
    await dropSharedStore(url).catch(() => {});
    server?.stop();
    if (savedState === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = savedState;
    await rm(base, { recursive: true, force: true });
  });

  it('connections terminated mid-transaction or under a held lock fail those calls (IO, LOCKED), never crash the process', async () => {
    // Without a listener on checked-out clients this crashed the process (an uncaught 'error' event).
    const store = await openAsMachine(url, 'm-c');
    const killer = new pg.Client({ connectionString: server.url });
    await killer.connect();
    let stop = false;
    let kills = 0;
    const killing = (async () => {
      while (!stop) {
        kills += (await killer.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ckpt' AND pid <> pg_backend_pid()`)).rowCount ?? 0;
        await sleep(10);
      }
    })();
    const codes: Record<string, number> = {};
    const note = (err: unknown): void => {
      const e = err as { code?: string; message?: string };
      const code = e.code === 'LOCKED' && /lost while held/.test(e.message ?? '') ? 'LOCKED (lost while held)' : (e.code ?? String(err));
      codes[code] = (codes[code] ?? 0) + 1;
    };
    try {
      const backend = store.ctx.backend;
      for (let i = 0; i < 80; i++) {
        // An external write is a transaction on a checked-out client; a lock holds one for its whole run.
        await backend.write(`blobs/zz/k${i}`, Buffer.from(`value ${i}`)).then(() => note({ code: 'ok' }), note);
        await backend.withLock(`t/lock${i % 3}`, () => sleep(3)).then(() => note({ code: 'ok' }), note);
      }
    } finally {
      stop = true;
      await killing;
      await killer.end();
      await store.close();
    }
    process.stdout.write(`terminated ${kills} connections; outcomes ${JSON.stringify(codes)}\n`);
    expect(kills).toBeGreaterThan(0);
    expect(Object.keys(codes).filter((c) => !['ok', 'IO', 'LOCKED (lost while held)'].includes(c))).toEqual([]);
    expect(codes.ok ?? 0).toBeGreaterThan(0);
  }, 120_000);

  it('in-flight commands fail with IO or finish, the feed reconnects, the next commands work, verify clean', async () => {
    const storeB = await openAsMachine(url, 'm-b');
    let daemon: RunningDaemon | undefined;
    let sse: ReturnType<typeof listen> | undefined;
    try {
      daemon = await startDaemon({ store: storeB, version: 'test' });
      sse = listen(daemon);
      const a = join(base, 'a');
      const bFolder = join(base, 'b');
      await mkdir(a);
      await mkdir(bFolder);
      for (let i = 0; i < LOOPS; i++) {
        await writeFile(join(a, `f${i}.txt`), 'start');
        expect((await ckpt(a, url, ['session', 'new', '--id', `a${i}`])).code).toBe(0);
      }

      // B: the library in this process (its pools live through the restart).
      const bSession = await (await storeB.openWorkspace(bFolder)).create({ id: 'b-lib' });
      const bErrors: { code: string; message: string; at: number }[] = [];
      const bDone: number[] = [];
      let restartedAt = Infinity;
      let stopAt = Infinity;
      const bLoop = (async () => {
        for (let r = 0; Date.now() < stopAt; r++) {
          try {
            await bSession.turn({ text: `b ${r}` });
            await writeFile(join(bFolder, 'g.txt'), `b ${r}`);
            await bSession.scan({ tool: 'Bash' });
            bDone.push(Date.now());
          } catch (err) {
            bErrors.push({ code: (err as { code?: string }).code ?? 'none', message: String(err).slice(0, 200), at: Date.now() });
            await sleep(100);
          }
        }
      })();

      const outcomes: Outcome[][] = Array.from({ length: LOOPS }, () => []);
      const loops = outcomes.map(async (mine, i) => {
        for (let r = 0; Date.now() < stopAt; r++) {
          for (const args of [['--session', `a${i}`, 'turn', '--text', `a${i} ${r}`], ['--session', `a${i}`, 'capture', `f${i}.txt`]]) {
            mine.push(await ckpt(a, url, args));
          }
          await writeFile(join(a, `f${i}.txt`), `a${i} ${r}`);
          mine.push(await ckpt(a, url, ['--session', `a${i}`, 'settle', `f${i}.txt`]));
        }
      });

      await sleep(3_000);
      const t0 = Date.now();
      server.restart();
      restartedAt = Date.now();
      process.stdout.write(`pg_ctl restart -m fast took ${restartedAt - t0} ms\n`);
      await sleep(10_000);
      stopAt = Date.now();
      await Promise.all([...loops, bLoop]);

      const all = outcomes.flat();
      const failed = all.filter((o) => o.code !== 0);
      process.stdout.write(
        `A: ${all.length} commands, ${failed.length} failed: ${JSON.stringify(failed.map((f) => ({ args: f.args, code: f.code, error: f.error, message: f.message?.slice(0, 120), ms: f.end - f.start })))}\n` +
          `B (library): ${bDone.length} rounds, errors ${JSON.stringify(bErrors.map((e) => ({ code: e.code, message: e.message.slice(0, 120) })))}\n`,
      );
      // Failures are IO (exit 6) only, and only around the restart.
      for (const f of failed) {
        expect(f.error === 'IO' || (f.error === 'LOCKED' && /lost while held/.test(f.message ?? '')), `${f.args} (exit ${f.code}): ${f.message}`).toBe(true);
        expect(f.code).toBe(f.error === 'IO' ? 6 : 7);
        expect(f.start).toBeLessThan(restartedAt + 2_000);
      }
      // IO, or LOCKED when a lock's connection broke while held and what ran under it had finished
      // (the holder learns that its exclusion was not guaranteed, as with a folder lock taken over).
      for (const e of bErrors) {
        expect(e.code === 'IO' || (e.code === 'LOCKED' && /lost while held/.test(e.message)), e.message).toBe(true);
        expect(e.at).toBeLessThan(restartedAt + 2_000);
      }
      // The next commands work: every loop, and B, completed work after the restart.
      for (const [i, mine] of outcomes.entries()) expect(mine.filter((o) => o.code === 0 && o.start > restartedAt).length, `loop a${i}`).toBeGreaterThan(0);
      expect(bDone.filter((t) => t > restartedAt).length).toBeGreaterThan(0);

      // The daemon's LISTEN connection was renewed (the size poll alone would also bring events, late)…
      const listening = async (): Promise<number> => {
        const c = new pg.Client({ connectionString: server.url });
        await c.connect();
        try {
          return (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'ckpt-listen' AND query LIKE 'LISTEN%'`)).rows[0]!.n;
        } finally {
          await c.end();
        }
      };
      for (const until = Date.now() + 15_000; (await listening()) < 1 && Date.now() < until; ) await sleep(200);
      expect(await listening(), "the daemon's LISTEN connection after the restart").toBe(1);
      // …and a turn appended now reaches its stream; its API answers.
      const marker = `after the restart ${Date.now()}`;
      expect((await ckpt(a, url, ['--session', 'a0', 'turn', '--text', marker])).code).toBe(0);
      const deadline = Date.now() + 20_000;
      while (!sse.got.some((e) => e.event === 'turn' && e.data.includes(marker)) && Date.now() < deadline) await sleep(100);
      expect(sse.got.some((e) => e.event === 'turn' && e.data.includes(marker)), 'the turn after the restart on the SSE stream').toBe(true);
      const listed = await getJson(daemon, '/workspaces');
      expect(listed.status).toBe(200);

      const problems = (await verify(storeB.ctx)).problems;
      expect(problems).toEqual([]);
      for (let i = 0; i < LOOPS; i++) {
        const ws = (await storeB.listWorkspaces()).find((w) => w.machine === 'm-a')!;
        const events = await (await storeB.openWorkspaceById(ws.id)).get(`a${i}`).then((s) => s.events());
        expect(events.map((e) => e.seq)).toEqual(events.map((_, k) => k + 1));
      }
    } finally {
      sse?.close();
      await daemon?.close();
      await storeB.close();
    }
  }, 300_000);
});
