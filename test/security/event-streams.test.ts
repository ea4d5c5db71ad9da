// Issue 27 item 10: the daemon capped nothing on `GET /events` (2,000 authenticated streams grew it by
// ~95 MB). Now each client (one web sign-in, or the bearer token, from one remote address) may hold
// `perClient` live streams and the daemon `total`; beyond either the answer is 429 LIMIT_REACHED
// (DESIGN §7) with Retry-After, and a stream's slot comes back when its client goes away. Real
// daemons, real sockets: an in-process one with small limits, the default caps, and `ckpt serve` with
// the limit from its flag and from the environment. And a stream whose client never reads is ended
// once it is its backlog behind (its queue grew the daemon's memory without bound); the client resumes.
import { request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../src/http/daemon.js';
import { openStore, type Store } from '../../src/store.js';
import { spawnDaemon } from '../helpers/http.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon | undefined;
const open: Stream[] = [];

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-streams-');
  store = await openStore({ dir: dirs.store });
});

afterEach(async () => {
  for (const s of open.splice(0)) s.close();
  await daemon?.close();
  daemon = undefined;
  await dirs.cleanup();
});

interface Stream {
  status: number;
  retryAfter?: string;
  /** The JSON error of a refused stream. */
  error?: { code: string; data: Record<string, unknown> };
  /** Text received so far on an admitted stream. */
  text: () => string;
  close: () => void;
}

/** Opens GET /events on a real socket; resolves with the head (and the body of a refusal). */
function openStream(url: string, headers: Record<string, string>, path = '/events'): Promise<Stream> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    req = request({ host: u.hostname, port: u.port, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      const stream: Stream = { status: res.statusCode ?? 0, text: () => text, close: () => req!.destroy() };
      const retry = res.headers['retry-after'];
      if (typeof retry === 'string') stream.retryAfter = retry;
      if (stream.status === 200) {
        open.push(stream);
        res.on('data', (d: string) => (text += d));
        res.on('error', () => {});
        resolve(stream);
        return;
      }
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        stream.error = (JSON.parse(text) as { error: Stream['error'] }).error;
        resolve(stream);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function webSignIn(url: string, token: string): Promise<{ cookie: string; 'x-ckpt-key': string }> {
  const code = ((await (await fetch(`${url}/web/code`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).json()) as { code: string }).code;
  const res = await fetch(`${url}/login?code=${code}`, { redirect: 'manual' });
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const key = /#k=([\w-]+)$/.exec(res.headers.get('location') ?? '')![1]!;
  return { cookie, 'x-ckpt-key': key };
}

async function eventually(what: string, check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('GET /events caps', () => {
  it('refuses a client beyond its cap and the daemon beyond its total with 429 LIMIT_REACHED; a slot comes back on disconnect', async () => {
    daemon = await startDaemon({ store, version: 'test', streamLimits: { perClient: 3, total: 5 } });
    const bearer = { authorization: `Bearer ${daemon.token}` };
    const mine: Stream[] = [];
    for (let i = 0; i < 3; i++) mine.push(await openStream(daemon.url, bearer));
    expect(mine.map((s) => s.status)).toEqual([200, 200, 200]);
    const refused = await openStream(daemon.url, bearer);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('5');
    expect(refused.error).toMatchObject({ code: 'LIMIT_REACHED', data: { scope: 'client', limit: 3, open: 3 } });

    // Another client (a web sign-in) has its own cap, inside the daemon's total.
    const page = await webSignIn(daemon.url, daemon.token);
    const pageStreams = [await openStream(daemon.url, { cookie: page.cookie }, `/events?key=${page['x-ckpt-key']}`), await openStream(daemon.url, page)];
    expect(pageStreams.map((s) => s.status)).toEqual([200, 200]);
    const other = await webSignIn(daemon.url, daemon.token);
    const full = await openStream(daemon.url, other);
    expect(full.status).toBe(429);
    expect(full.error).toMatchObject({ code: 'LIMIT_REACHED', data: { scope: 'daemon', limit: 5, open: 5 } });
    // A refusal is cheap and says so before authentication-free work: a stolen cookie alone still gets 401, not 429.
    expect((await openStream(daemon.url, { cookie: other.cookie })).status).toBe(401);

    // The admitted streams still carry events.
    const s = await (await store.openWorkspace(dirs.workspace)).create({ id: 's1' });
    await s.turn({ text: 'still live' });
    await eventually('the turn reaches every admitted stream', async () => [...mine, ...pageStreams].every((x) => x.text().includes('still live')));

    // A client that goes away gives its slot back (to itself and to the daemon's total).
    mine[0]!.close();
    await eventually('the token client is admitted again', async () => {
      const again = await openStream(daemon!.url, bearer);
      if (again.status !== 200) return false;
      mine[0] = again;
      return true;
    });
    pageStreams[0]!.close();
    await eventually('the second sign-in is admitted once the total has room', async () => (await openStream(daemon!.url, other)).status === 200);
  });

  it('holds the default caps: 32 streams per client, the 33rd is 429', async () => {
    daemon = await startDaemon({ store, version: 'test' });
    const bearer = { authorization: `Bearer ${daemon.token}` };
    const statuses: number[] = [];
    for (let i = 0; i < 33; i++) statuses.push((await openStream(daemon.url, bearer)).status);
    expect(statuses.slice(0, 32).every((x) => x === 200)).toBe(true);
    expect(statuses[32]).toBe(429);
    // Closing every stream gives every slot back.
    for (const s of open.splice(0)) s.close();
    await eventually('all 32 slots come back', async () => {
      const batch: Stream[] = [];
      for (let i = 0; i < 32; i++) batch.push(await openStream(daemon!.url, bearer));
      const ok = batch.every((x) => x.status === 200);
      for (const x of open.splice(0)) x.close();
      return ok;
    });
  });

  it('takes its limits from `ckpt serve` flags and the environment', async () => {
    await writeFile(`${dirs.workspace}/.keep`, '');
    for (const how of [{ args: ['--max-event-streams-per-client', '2'] }, { env: { CKPT_MAX_EVENT_STREAMS: '2' } }]) {
      const d = await spawnDaemon(dirs.store, how);
      try {
        const bearer = { authorization: `Bearer ${d.token}` };
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await openStream(d.url, bearer)).status);
        expect(statuses, JSON.stringify(how)).toEqual([200, 200, 429]);
      } finally {
        for (const s of open.splice(0)) s.close();
        d.child.kill('SIGTERM');
        await d.exited;
      }
    }
  });
});

/** A client that reads everything: counts the turn events it has received. */
function countingStream(url: string, token: string): { turns: () => number; close: () => void } {
  let turns = 0;
  let rest = '';
  const req = request(`${url}/events`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      const messages = (rest + d).split('\n\n');
      rest = messages.pop()!;
      for (const m of messages) if (m.startsWith('event: turn\n')) turns++;
    });
    res.on('error', () => {});
  });
  req.on('error', () => {});
  req.end();
  return { turns: () => turns, close: () => req.destroy() };
}

describe('GET /events backlog', () => {
  it('ends a stream whose client stops reading once it falls its backlog behind; the client resumes with Last-Event-ID', async () => {
    daemon = await startDaemon({ store, version: 'test', streamLimits: { perClient: 2, total: 2 }, streamBacklog: { events: 10_000, bytes: 4 << 20 } });
    const u = new URL(daemon.url);
    const bearer = { authorization: `Bearer ${daemon.token}` };
    // A raw socket that reads the stream's head and hello, then stops reading.
    const stuck = connect({ host: u.hostname, port: Number(u.port) });
    let received = '';
    let closed = false;
    stuck.setEncoding('utf8');
    stuck.on('data', (d: string) => (received += d));
    stuck.on('close', () => (closed = true));
    stuck.on('error', () => {});
    stuck.write(`GET /events HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${daemon.token}\r\n\r\n`);
    await eventually('the hello arrives', async () => received.includes('event: hello'));
    stuck.pause();
    // A client that reads: each turn reaches it before the next is made, so the feed delivers one at a time.
    const reader = countingStream(daemon.url, daemon.token);
    try {
      // The two hold both slots.
      await eventually('both streams are open', async () => (await openStream(daemon!.url, bearer)).status === 429);
      // Prompts of ~180 KB until the stuck socket's buffers are full and its backlog is over 4 MiB:
      // the daemon then ends that stream and its slot comes back; the reading one goes on.
      const s = await (await store.openWorkspace(dirs.workspace)).create({ id: 's1' });
      const prompt = '中'.repeat(60_000);
      let ended = false;
      let turns = 0;
      while (turns < 600 && !ended) {
        await s.turn({ text: `${turns} ${prompt}` });
        turns++;
        await eventually('the reading client has the turn', async () => reader.turns() === turns);
        if (turns % 10 === 0) {
          const probe = await openStream(daemon.url, bearer);
          ended = probe.status === 200;
          probe.close();
        }
      }
      expect(ended).toBe(true);
      await s.turn({ text: 'after' });
      await eventually('the reading client is still served', async () => reader.turns() === turns + 1);
      // The stuck client reads what reached it and finds the stream closed by the daemon.
      stuck.resume();
      await eventually('the stream is closed', async () => closed, 10_000);
      const ids = [...received.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!);
      const lastId = ids.at(-1)!;
      expect(lastId).toMatch(/^[0-9a-f]{8}-\d+$/);
      // Resuming from the last id it read replays what it missed (the hub still holds it).
      const next = `${lastId.split('-')[0]}-${Number(lastId.split('-')[1]) + 1}`;
      const again = await openStream(daemon.url, { ...bearer, 'last-event-id': lastId });
      expect(again.status).toBe(200);
      await eventually('the missed events are replayed', async () => again.text().includes(`id: ${next}\n`), 10_000);
      expect(again.text()).not.toContain('event: reset');
    } finally {
      stuck.destroy();
      reader.close();
    }
  });
});
