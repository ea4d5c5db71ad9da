// A private PostgreSQL cluster for a test that restarts its server (issue 33): the shared suites run
// in parallel against one cluster, so a restart there would fail the others. Started and stopped with
// scripts/start-pg.sh / stop-pg.sh (Debian's PostgreSQL 15, as `postgres` when run as root).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));

export interface PgServer {
  dir: string;
  /** postgres://ckpt@127.0.0.1:PORT/ckpt */
  url: string;
  /** `pg_ctl restart -m fast`: every connection is terminated, the server is back when this returns. */
  restart(): void;
  stop(): void;
}

function pgCtl(): { bin: string; as: string[] } {
  const dirs = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'];
  const bin = dirs.map((d) => join(d, 'pg_ctl')).find((p) => existsSync(p)) ?? 'pg_ctl';
  const root = process.getuid?.() === 0;
  const gid = root ? execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim() : '';
  return { bin, as: root ? ['setpriv', '--reuid=postgres', `--regid=${gid}`, '--init-groups', '--'] : [] };
}

export function startPgServer(): PgServer {
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-pg-private-'));
  const out = execFileSync('bash', [join(SCRIPTS, 'start-pg.sh'), dir], { encoding: 'utf8' });
  const url = /^PG_URL=(.*)$/m.exec(out)?.[1];
  if (!url) throw new Error(`start-pg.sh printed no PG_URL: ${out}`);
  const { bin, as } = pgCtl();
  const run = (...args: string[]): void => {
    const [cmd, ...rest] = [...as, bin, ...args];
    execFileSync(cmd!, rest, { stdio: 'ignore' });
  };
  return {
    dir,
    url,
    restart: () => run('-D', join(dir, 'data'), '-l', join(dir, 'server.log'), '-m', 'fast', '-w', '-t', '60', 'restart'),
    stop: () => {
      execFileSync('bash', [join(SCRIPTS, 'stop-pg.sh'), dir], { stdio: 'ignore' });
    },
  };
}
