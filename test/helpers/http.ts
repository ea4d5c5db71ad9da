// A small HTTP client for daemon tests: real requests over loopback (node:http, so tests can set any
// Host header), JSON in and out, and a Server-Sent Events reader.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { CKPT_BIN } from './cli.js';

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is (not JSON-encoded). */
  raw?: string | Buffer;
  token?: string | null;
  host?: string;
  headers?: Record<string, string>;
}

export function createClient(url: string, token: string) {
  const u = new URL(url);
  const call = (method: string, path: string, options: CallOptions = {}): Promise<HttpReply> =>
    new Promise((resolve, reject) => {
      const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      const headers: Record<string, string> = { ...options.headers };
      const tok = options.token === undefined ? token : options.token;
      if (tok !== null) headers.authorization = `Bearer ${tok}`;
      if (options.host) headers.host = options.host;
      if (payload !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      const req = request({ hostname: u.hostname, port: u.port, path, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });

  /** Opens GET `path` as an event stream; `events` fills as they arrive. */
  const sse = (path: string, headers: Record<string, string> = {}) => {
    const events: SseEvent[] = [];
    let waiters: (() => void)[] = [];
    const req = readSse(url, token, path, (e) => {
      events.push(e);
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    }, headers);
    return {
      events,
      /** Resolves once `pred` holds for the events received (rejects after `ms`). */
      async until(pred: (evs: typeof events) => boolean, ms = 10_000): Promise<void> {
        const deadline = Date.now() + ms;
        while (!pred(events)) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for events; got ${JSON.stringify(events)}`);
          await new Promise<void>((r) => {
            waiters.push(r);
            setTimeout(r, 50);
          });
        }
      },
      close: () => req.destroy(),
    };
  };
  /** Sends only a request head (e.g. announcing a huge body) and returns the status line of the answer. */
  const head = (lines: string[]): Promise<string> =>
    new Promise((resolve, reject) => {
      const sock = connect(Number(u.port), u.hostname, () => sock.write(`${lines.join('\r\n')}\r\nauthorization: Bearer ${token}\r\n\r\n`));
      let got = '';
      sock.setEncoding('utf8');
      sock.on('data', (d: string) => {
        got += d;
        if (got.includes('\r\n\r\n')) {
          sock.destroy();
          resolve(got);
        }
      });
      sock.on('error', reject);
    });
  return { call, sse, head };
}

/** Starts `ckpt serve` as a child; resolves with its url, web sign-in link (`open`) and token once it listens. */
export async function spawnDaemon(
  store: string,
  extra: { args?: string[]; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ child: ChildProcess; url: string; open: string; token: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CKPT_BIN, '--store', store, 'serve', '--json', ...(extra.args ?? [])], { cwd: extra.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...extra.env } });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const info = await new Promise<{ url: string; open: string }>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      try {
        resolve(JSON.parse(out) as { url: string; open: string });
      } catch {}
    });
    child.on('exit', () => reject(new Error(`daemon exited: ${err}`)));
  });
  const token = (await readFile(join(store, 'daemon', 'token'), 'utf8')).trim();
  return { child, url: info.url, open: info.open, token, exited };
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads GET `path` of the daemon at `url` as a Server-Sent Events stream and calls `onEvent` for each
 * complete event (blocks with neither an event name nor data are skipped). Destroy the returned
 * request to close the stream; connection errors end it quietly.
 */
export function readSse(url: string, token: string, path: string, onEvent: (e: SseEvent) => void, headers: Record<string, string> = {}): ClientRequest {
  const u = new URL(url);
  let buf = '';
  const req = request({ hostname: u.hostname, port: u.port, path, method: 'GET', headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      buf += d;
      for (let k = buf.indexOf('\n\n'); k >= 0; k = buf.indexOf('\n\n')) {
        const block = buf.slice(0, k);
        buf = buf.slice(k + 2);
        const e: SseEvent = { data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) e.id = line.slice(4);
          else if (line.startsWith('event: ')) e.event = line.slice(7);
          else if (line.startsWith('data: ')) e.data += line.slice(6);
        }
        if (e.event || e.data) onEvent(e);
      }
    });
  });
  req.on('error', () => {});
  req.end();
  return req;
}
