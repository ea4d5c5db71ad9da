// The shared driver (PostgreSQL + S3, issue 17) against the same contract suite as the fs driver, plus
// what only the shared driver has: S3 objects are unique per write and a row is the commit point,
// appends from many connections never repeat or skip an offset, a lock dies with its holder's
// connection, leftovers of interrupted writes, and NOTIFY on append. Runs under `npm run test:shared`.
import { spawn } from 'node:child_process';
import * as net from 'node:net';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBackendContract } from '../src/storage/backend-contract.js';
import { createSharedBackend, type SharedBackend } from '../src/storage/shared/shared-backend.js';
import { advisoryLockId } from '../src/storage/shared/pg-lock.js';
import { createS3Objects } from '../src/storage/shared/s3-objects.js';
import { parseSharedStoreUrl, redactUrl } from '../src/storage/shared/store-url.js';
import { runCli } from './helpers/cli.js';
import { dropSharedStore, freshSharedUrl, SHARED_BASE } from './helpers/shared-store.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const describeShared = SHARED_BASE ? describe : describe.skip;

if (SHARED_BASE) {
  runBackendContract('shared (PostgreSQL + S3)', async () => {
    const url = freshSharedUrl();
    const backend = await createSharedBackend({ url });
    return {
      backend,
      cleanup: async () => {
        await backend.close();
        await dropSharedStore(url);
      },
    };
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describeShared('shared backend specifics', () => {
  let url: string;
  let b: SharedBackend;
  beforeEach(async () => {
    url = freshSharedUrl();
    b = await createSharedBackend({ url, lockTimeoutMs: 5_000 });
  });
  afterEach(async () => {
    await b.close();
    await dropSharedStore(url);
  });

  it('keeps blobs and packs in S3 and everything else in PostgreSQL', async () => {
    const loc = parseSharedStoreUrl(url);
    const s3 = createS3Objects({ bucket: loc.bucket, endpoint: loc.endpoint, region: loc.region, where: loc.redacted });
    try {
      await b.create('blobs/aa/bb', Buffer.from('blob'));
      await b.append('packs/p.pack', Buffer.from('one'));
      await b.append('packs/p.pack', Buffer.from('two'));
      await b.write('workspaces/w/workspace.json', Buffer.from('{}'));
      const names = (await s3.list(loc.prefix)).map((o) => o.name.slice(loc.prefix.length)).sort();
      expect(names).toHaveLength(3);
      expect(names.filter((n) => n.startsWith('blobs/aa/bb.'))).toHaveLength(1);
      expect(names.filter((n) => n.startsWith('packs/p.pack.'))).toHaveLength(2);
      expect((await b.readRange('packs/p.pack', 2, 3))?.toString()).toBe('etw');
      expect((await b.read('packs/p.pack'))?.toString()).toBe('onetwo');
      // Removing the object removes its S3 objects.
      await b.remove('packs/p.pack');
      expect((await s3.list(`${loc.prefix}packs/`)).length).toBe(0);
    } finally {
      s3.close();
    }
  });

  it('serializes appends from many connections: offsets never repeat or skip', async () => {
    const others = await Promise.all([1, 2, 3].map(() => createSharedBackend({ url })));
    try {
      const all = [b, ...others];
      await Promise.all(
        Array.from({ length: 80 }, (_, i) => all[i % all.length]!.append('logs/l', Buffer.from(`${String(i).padStart(3, '0')}\n`))),
      );
      const lines = (await b.read('logs/l'))!.toString().split('\n').filter(Boolean);
      expect(lines).toHaveLength(80);
      expect(new Set(lines).size).toBe(80);
      expect((await b.stat('logs/l'))?.size).toBe(80 * 4);
    } finally {
      await Promise.all(others.map((o) => o.close()));
    }
  });

  it('fails closed when an S3 object is lost under a live row', async () => {
    const loc = parseSharedStoreUrl(url);
    const s3 = createS3Objects({ bucket: loc.bucket, endpoint: loc.endpoint, region: loc.region, where: loc.redacted });
    try {
      await b.create('blobs/cc/dd', Buffer.from('content'));
      await s3.deleteMany((await s3.list(loc.prefix)).map((o) => o.name));
      await expect(b.read('blobs/cc/dd')).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    } finally {
      s3.close();
    }
  });

  it('stops writing under a lock whose connection broke: another process may hold it now (round-6 probe)', async () => {
    const loc = parseSharedStoreUrl(url);
    const admin = new pg.Pool({ connectionString: loc.pgConnectionString });
    try {
      await b.append('logs/l', Buffer.from('one\n'));
      const run = b.withLock('logs/l', async () => {
        await b.append('logs/l', Buffer.from('two\n'));
        // What a restart, failover or idle-connection killer does to the one connection holding the lock
        // (only this lock's: other suites hold locks on the same server at the same time).
        const [k1, k2] = advisoryLockId(loc.schema, 'logs/l');
        const killed = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_locks
           WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid::bigint = $1 AND objid::bigint = $2 AND pid <> pg_backend_pid()`,
          [k1 >>> 0, k2 >>> 0],
        );
        expect(killed.rowCount).toBe(1);
        // The lock is free now: another process takes it and appends.
        await b.withLock('other', async () => {}).catch(() => {});
        for (let i = 0; i < 100; i++) {
          try {
            await b.append('logs/l', Buffer.from('three\n'));
          } catch (err) {
            return err;
          }
          await sleep(20);
        }
        return undefined;
      });
      await expect(run).rejects.toMatchObject({ code: 'LOCKED', data: { compromised: true } });
      // 'two' went in while the lock was held; nothing was written once it was lost.
      expect((await b.read('logs/l'))?.toString()).toMatch(/^one\ntwo\n(three\n)?$/);
    } finally {
      await admin.end();
    }
  });

  it('never deletes an S3 object another row still names (round-6 probe: a bad row replaced by a put)', async () => {
    const loc = parseSharedStoreUrl(url);
    const pool = new pg.Pool({ connectionString: loc.pgConnectionString });
    try {
      await b.create('blobs/aa/01', Buffer.from('blob one'));
      await b.create('blobs/aa/02', Buffer.from('blob two'));
      // A damaged row: blob 01 names blob 02's S3 object.
      await pool.query(`UPDATE "${loc.schema}".chunks SET s3_name = (SELECT s3_name FROM "${loc.schema}".chunks WHERE key = 'blobs/aa/02') WHERE key = 'blobs/aa/01'`);
      // The repair (the blob store's put over a corrupt copy) and a removal drop 01's rows.
      await b.write('blobs/aa/01', Buffer.from('blob one'));
      expect((await b.read('blobs/aa/02'))?.toString()).toBe('blob two');
      await pool.query(`UPDATE "${loc.schema}".chunks SET s3_name = (SELECT s3_name FROM "${loc.schema}".chunks WHERE key = 'blobs/aa/02') WHERE key = 'blobs/aa/01'`);
      await b.remove('blobs/aa/01');
      expect((await b.read('blobs/aa/02'))?.toString()).toBe('blob two');
      // Removing 02 itself still deletes its object (nothing else names it now).
      await b.remove('blobs/aa/02');
      // Left over: only 01's own two objects (the first one the damage orphaned, the repair's), never 02's.
      const orphans = (await b.leftovers()).map((l) => l.key).filter((k) => k.startsWith('../s3/'));
      expect(orphans).toHaveLength(2);
      for (const k of orphans) expect(k).toMatch(/^\.\.\/s3\/blobs\/aa\/01\./);
    } finally {
      await pool.end();
    }
  });

  it("never deletes an S3 object that is not this store's, whatever a row names (probe 2026-12-07: a forged row made gc delete it)", async () => {
    const loc = parseSharedStoreUrl(url);
    const s3 = createS3Objects({ bucket: loc.bucket, endpoint: loc.endpoint, region: loc.region, where: loc.redacted });
    const pool = new pg.Pool({ connectionString: loc.pgConnectionString });
    // Any key of the bucket, and one shaped like another store's object under this prefix.
    const foreign = [`unrelated-${loc.schema}/precious.csv`, `${loc.prefix}blobs/aa/03.fedcba9876543210.0123456789abcdef`];
    try {
      for (const name of foreign) await s3.put(name, Buffer.from('not ckpt data'));
      for (const [i, name] of foreign.entries()) {
        const key = `blobs/aa/0${i + 1}`;
        await b.create(key, Buffer.from(`blob ${i}`));
        await pool.query(`UPDATE "${loc.schema}".chunks SET s3_name = $1 WHERE key = $2`, [name, key]);
        await b.remove(key);
      }
      for (const name of foreign) expect(await s3.head(name), name).toBeTruthy();
    } finally {
      await s3.deleteMany(foreign).catch(() => {});
      s3.close();
      await pool.end();
    }
  });

  it('reports an S3 object without a row as a leftover, removed only past the cutoff', async () => {
    const loc = parseSharedStoreUrl(url);
    const s3 = createS3Objects({ bucket: loc.bucket, endpoint: loc.endpoint, region: loc.region, where: loc.redacted });
    const pool = new pg.Pool({ connectionString: loc.pgConnectionString });
    try {
      const id = (await pool.query<{ value: string }>(`SELECT value FROM "${loc.schema}".meta WHERE name = 'store_id'`)).rows[0]!.value;
      expect(id).toMatch(/^[0-9a-f]{16}$/);
      // What a writer killed between its S3 put and its row insert leaves behind: a name with this store's id.
      await s3.put(`${loc.prefix}blobs/ee/ff.${id}.0123456789abcdef`, Buffer.from('orphan'));
      // Not this store's names (another store's id, an older ckpt's shape): never its leftovers.
      await s3.put(`${loc.prefix}blobs/ee/ff.fedcba9876543210.0123456789abcdef`, Buffer.from('other'));
      await s3.put(`${loc.prefix}blobs/ee/ff.0123456789abcdef`, Buffer.from('older'));
      const left = await b.leftovers();
      expect(left).toEqual([expect.objectContaining({ key: `../s3/blobs/ee/ff.${id}.0123456789abcdef`, bytes: 6 })]);
      for (const other of ['../s3/blobs/ee/ff.fedcba9876543210.0123456789abcdef', '../s3/blobs/ee/ff.0123456789abcdef']) {
        await expect(b.removeLeftover(other, Infinity)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      }
      expect(await b.removeLeftover(left[0]!.key, 0)).toBe(0);
      expect(await b.removeLeftover(left[0]!.key, Date.now() + 60_000)).toBe(6);
      expect(await b.leftovers()).toEqual([]);
      // A quarantined blob's S3 object is not an orphan, and a put meanwhile writes a new one.
      await b.create('blobs/11/22', Buffer.from('x'));
      const q = await b.quarantine('blobs/11/22');
      expect(await b.create('blobs/11/22', Buffer.from('x'))).toBe(true);
      expect((await b.leftovers()).map((l) => l.key)).toEqual([q!.key]);
      expect(await b.removeLeftover(q!.key, Infinity)).toBe(1);
      expect((await b.read('blobs/11/22'))?.toString()).toBe('x');
      expect(await s3.head(`${loc.prefix}blobs/ee/ff.fedcba9876543210.0123456789abcdef`)).toBeTruthy();
    } finally {
      s3.close();
      await pool.end();
    }
  });

  it("two stores in one database and one bucket prefix: one's leftovers never name the other's objects (round-6 probe: its gc deleted them)", async () => {
    // Store B: another schema, the same bucket and prefix, and one nested below A's `blobs/`.
    const a = parseSharedStoreUrl(url);
    const sibling = new URL(url);
    sibling.searchParams.set('schema', `${a.schema}_b`);
    const nested = new URL(url);
    nested.searchParams.set('schema', `${a.schema}_c`);
    nested.searchParams.set('blobs', `s3://${a.bucket}/${a.prefix}blobs/team-c`);
    for (const other of [sibling.href, nested.href]) {
      const b2 = await createSharedBackend({ url: other });
      try {
        await b2.create('blobs/ab/cd', Buffer.from('the other store'));
        await b2.create('packs/p1.pack', Buffer.from('pack'));
        expect((await b.leftovers()).filter((l) => l.key.startsWith('../s3/'))).toEqual([]);
        expect((await b2.read('blobs/ab/cd'))?.toString()).toBe('the other store');
      } finally {
        await b2.close();
        await dropSharedStore(other);
      }
    }
  });

  it('takes over the lock of a SIGKILLed holder in another process', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'test/fixtures/shared-lock-holder.ts'), url, 'locks/x'], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    for (let i = 0; i < 200 && !out.includes('held'); i++) await sleep(50);
    expect(out).toContain('held');
    await expect(b.withLock('locks/x', async () => 1, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'LOCKED' });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(await b.withLock('locks/x', async () => 'taken', { timeoutMs: 10_000 })).toBe('taken');
  });

  it('refuses tables of a newer version than it knows', async () => {
    const loc = parseSharedStoreUrl(url);
    const client = new pg.Client({ connectionString: loc.pgConnectionString });
    await client.connect();
    try {
      await client.query(`UPDATE "${loc.schema}".meta SET value = '99' WHERE name = 'schema_version'`);
    } finally {
      await client.end();
    }
    await expect(createSharedBackend({ url })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('notifies subscribers of every log append with the new size, not of blob or pack writes', async () => {
    const other = await createSharedBackend({ url });
    const seen: { key: string; size: number }[] = [];
    const stop = await other.subscribe((e) => seen.push(e));
    try {
      await b.append('workspaces/w/sessions/s/events.jsonl', Buffer.from('{"seq":1}\n'));
      await b.append('workspaces/w/sessions/s/events.jsonl', Buffer.from('{"seq":2}\n'));
      await b.append('packs/p.pack', Buffer.from('bytes'));
      for (let i = 0; i < 100 && seen.length < 2; i++) await sleep(20);
      expect(seen).toEqual([
        { key: 'workspaces/w/sessions/s/events.jsonl', size: 10 },
        { key: 'workspaces/w/sessions/s/events.jsonl', size: 20 },
      ]);
    } finally {
      await stop();
      await other.close();
    }
  });
  it('fails a query IO in bounded time when the server stops answering after connecting (probe: a restore waited for ever)', async () => {
    // A proxy to PostgreSQL that goes silent on demand: what a frozen server or a dead link looks like.
    const target = new URL(parseSharedStoreUrl(url).pgConnectionString);
    let silent = false;
    const sockets: net.Socket[] = [];
    const proxy = net.createServer((client) => {
      const server = net.connect(Number(target.port || 5432), target.hostname);
      sockets.push(client, server);
      client.on('data', (d) => void (silent || server.write(d)));
      server.on('data', (d) => void (silent || client.write(d)));
      for (const [a, z] of [[client, server], [server, client]] as const) a.on('error', () => z.destroy()).on('close', () => z.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const viaProxy = new URL(url);
    viaProxy.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    process.env.CKPT_SHARED_QUERY_TIMEOUT_MS = '1500';
    const frozen = await createSharedBackend({ url: viaProxy.href }).finally(() => delete process.env.CKPT_SHARED_QUERY_TIMEOUT_MS);
    try {
      await frozen.write('workspaces/w/x.json', Buffer.from('{}'));
      silent = true;
      const started = Date.now();
      await expect(frozen.read('workspaces/w/x.json')).rejects.toMatchObject({ code: 'IO', data: { retryable: true } });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      silent = false;
      for (const socket of sockets) socket.destroy();
      await frozen.close().catch(() => {});
      await new Promise((r) => proxy.close(r));
    }
  });

  it('ignores hostile NOTIFY payloads on its channel (any role may send them) and goes on delivering (probe: `null` ended the daemon)', async () => {
    const other = await createSharedBackend({ url });
    const seen: { key: string; size: number }[] = [];
    const stop = await other.subscribe((e) => seen.push(e));
    const loc = parseSharedStoreUrl(url);
    const raw = new pg.Client({ connectionString: loc.pgConnectionString });
    await raw.connect();
    try {
      for (const payload of ['null', '1', '"x"', '[]', 'true', '{"key":1,"size":2}', '{"key":"k","size":-1}', '{"key":"k","size":1e309}', '{', 'x'.repeat(7000)]) {
        await raw.query('SELECT pg_notify($1, $2)', [`ckpt_${loc.schema}`, payload]);
      }
      await b.append('workspaces/w/sessions/s/events.jsonl', Buffer.from('{"seq":1}\n'));
      for (let i = 0; i < 100 && seen.length < 1; i++) await sleep(20);
      expect(seen).toEqual([{ key: 'workspaces/w/sessions/s/events.jsonl', size: 10 }]);
    } finally {
      await raw.end();
      await stop();
      await other.close();
    }
  });
});

describe('shared store URLs', () => {
  it('parses the URL and never shows a password', () => {
    const loc = parseSharedStoreUrl('postgres://u:hunter2@127.0.0.1:5432/db?blobs=s3://bkt/pre/fix&endpoint=http://127.0.0.1:9000&sslmode=disable');
    expect(loc).toMatchObject({ bucket: 'bkt', prefix: 'pre/fix/', endpoint: 'http://127.0.0.1:9000', schema: 'ckpt' });
    expect(loc.pgConnectionString).toBe('postgres://u:hunter2@127.0.0.1:5432/db?sslmode=disable');
    expect(loc.redacted).not.toContain('hunter2');
    expect(redactUrl('postgres://u:pw@h/db?password=x&secret=y')).toBe('postgres://u:***@h/db?password=***&secret=***');
    let message = '';
    try {
      parseSharedStoreUrl('postgres://u:hunter2@h/db');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('blobs=');
    expect(message).not.toContain('hunter2');
    expect(() => parseSharedStoreUrl('postgres://h/db?blobs=s3://bkt&schema=Bad-Name')).toThrow(/schema/);
  });

  it('hides a password holding @, a space, / or # (round-6 probe)', () => {
    const shown = (url: string): string => {
      try {
        return parseSharedStoreUrl(url).redacted;
      } catch (err) {
        return (err as Error).message;
      }
    };
    for (const pw of ['Qa@Zk9@Xq7', 'Qa Zk9 Xq7', 'Qa/Zk9/Xq7', 'Qa#Zk9#Xq7', 'Qa?Zk9?Xq7']) {
      const out = shown(`postgres://u:${pw}@127.0.0.1:5432/db?blobs=s3://bkt&endpoint=http://127.0.0.1:9000`);
      for (const part of pw.split(/[@ /#?]/)) expect(out, pw).not.toContain(part);
    }
    expect(shown('postgres://u:p@ss@127.0.0.1:5432/db?blobs=s3://bkt')).toBe('postgres://u:***@127.0.0.1:5432/db?blobs=s3://bkt');
    expect(redactUrl('postgres://h/db?blobs=s3://bkt&endpoint=http://ak:sk@h:1')).toBe('postgres://h/db?blobs=s3://bkt&endpoint=http://ak:***@h:1');
    // Percent-encoded, as the parser decodes it (shared-store probe, 2026-12-07).
    const encoded = redactUrl('postgres://h/db?blobs=s3://bkt&endpoint=http%3A%2F%2Fak%3AS3CRETsk%40h%3A1&region=x');
    expect(encoded).not.toContain('S3CRETsk');
    expect(decodeURIComponent(encoded)).toContain('http://ak:***@h:1');
    expect(encoded).toMatch(/&region=x$/);
    expect(shown('postgres://h/db?blobs=s3://bkt&endpoint=http%3A%2F%2Fak%3AS3CRETsk%40h%3A1')).not.toContain('S3CRETsk');
  });

  it('never shows a password from the URL when the servers cannot be reached (library and CLI)', async () => {
    const url = 'postgres://u:hunter2@127.0.0.1:1/db?blobs=s3://bkt&endpoint=http://127.0.0.1:1';
    const err = (await createSharedBackend({ url }).then(
      () => undefined,
      (e: unknown) => e,
    )) as { code?: string; message: string; data?: unknown };
    expect(err?.code).toBe('IO');
    expect(err.message).toContain('postgres://u:***@127.0.0.1:1/db');
    expect(`${err.message} ${JSON.stringify(err.data)}`).not.toContain('hunter2');
    const r = await runCli(['--json', '--store', url, 'session', 'list'], { cwd: repo });
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stderr).error.code).toBe('IO');
    expect(r.stdout + r.stderr).not.toContain('hunter2');
  });
});
