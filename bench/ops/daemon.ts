// Starting `ckpt serve` for the daemon figures (a child process on a free loopback port), calling it
// over HTTP with its bearer token, and reading its resident memory from /proc. The daemon runs as
// users run it — the built bundle (bin/ckpt.js) — when `npm run build` made one, else from the
// sources through tsx (whose loader adds some 60 MB of resident memory and compile time).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../ckpt-api.js';

export interface Daemon {
  url: string;
  token: string;
  pid: number;
  /** POST/GET a JSON route; rejects on a non-2xx answer with the error's code and message. */
  call(method: 'GET' | 'POST', route: string, body?: unknown): Promise<Record<string, unknown>>;
  /** Resident and peak resident memory (bytes), from /proc (undefined off Linux). */
  memory(): { rss: number; peak: number } | undefined;
  stop(): Promise<void>;
}

export async function startDaemon(storeDir: string): Promise<Daemon> {
  const built = existsSync(path.join(REPO_ROOT, 'dist', 'bundle', 'main.js'));
  const entry = built ? [path.join(REPO_ROOT, 'bin', 'ckpt.js')] : ['--import', 'tsx', path.join(REPO_ROOT, 'bench/ops/serve-child.ts')];
  const child: ChildProcess = spawn(process.execPath, [...entry, '--store', storeDir, 'serve', '--json'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const { url } = await new Promise<{ url: string }>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      try {
        resolve(JSON.parse(out) as { url: string });
      } catch {}
    });
    child.on('exit', (code) => reject(new Error(`ckpt serve exited (${code}): ${err.trim().split('\n').slice(-2).join(' | ')}`)));
  });
  const token = readFileSync(path.join(storeDir, 'daemon', 'token'), 'utf8').trim();
  const pid = child.pid!;
  return {
    url,
    token,
    pid,
    async call(method, route, body) {
      const res = await fetch(`${url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as Record<string, unknown>;
      if (!res.ok) {
        const e = json.error as { code?: string; message?: string } | undefined;
        throw new Error(`${method} ${route}: ${res.status} ${e?.code ?? ''} ${e?.message ?? ''}`);
      }
      return json;
    },
    memory() {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
        return { rss: kb('VmRSS'), peak: kb('VmHWM') };
      } catch {
        return undefined;
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
