// The resident daemon's files in the store (DESIGN §10 "Daemon"): the bearer token every HTTP client
// presents (made at first start, mode 0600, kept across restarts so installed hooks keep working),
// and the claim file naming the one process that serves the store and where it listens. A claim whose
// process is gone (SIGKILL, crash) is taken over; a live one refuses a second daemon.
import type { StoreContext } from '../context.js';
import { CkptError } from '../errors.js';
import { processAlive, processStatus } from '../process-alive.js';
import { storeSecret } from '../storage/store-secret.js';

export const DAEMON_TOKEN_KEY = 'daemon/token';
export const DAEMON_CLAIM_KEY = 'daemon/daemon.json';
/** The TCP port the store's daemon last listened on: a restart without --port takes it again when free. */
export const DAEMON_PORT_KEY = 'daemon/port';
const CLAIM_LOCK = 'daemon/claim';

/** Where a running daemon listens. */
export interface DaemonInfo {
  pid: number;
  /** `http://127.0.0.1:PORT` or `unix:/path/to.sock`. */
  url: string;
  host?: string;
  port?: number;
  socket?: string;
  startedAt: string;
  /** The size cap its scans and captures apply (CKPT_MAX_FILE_SIZE or --max-file-size when started); absent in older claims: the default. */
  maxBlobBytes?: number;
  /**
   * This daemon took over from one that died holding the claim: the dead one's start (ms; its own
   * owed start when it had one). Owner records that one owed may be missing from any workspace's index
   * until it is caught up (ownersOwed).
   */
  ownersOwedSince?: number;
}

/** The store's daemon token, created (32 random bytes, hex, mode 0600) when there is none yet. */
export function daemonToken(ctx: StoreContext): Promise<string> {
  return storeSecret(ctx.backend, DAEMON_TOKEN_KEY, `the daemon token file ${DAEMON_TOKEN_KEY} is malformed; delete it to make a new one`);
}

/**
 * The store's daemon claim in one read: `running` when its process is alive; `deadSince` when it died
 * without releasing the claim (killed, or the machine went down) — since when it may owe owner-index
 * records (ownersOwed: its start, in ms, 0 when its claim does not say, or the earlier start of
 * a dead daemon it took over from).
 */
export async function daemonClaim(ctx: StoreContext): Promise<{ running?: DaemonInfo; deadSince?: number }> {
  const info = await readClaim(ctx);
  if (info === undefined) return {};
  if (info.pid === process.pid || processAlive(info.pid)) return { running: info };
  return { deadSince: owedBy(info, 'gone') };
}

/** What the store's daemon may owe the owner index (ownersOwed), and who owes it. */
export interface OwedRecords {
  /** Since when (ms) records may be missing. */
  since: number;
  /**
   * The owing claim and its state (`<pid>@<startedAt> <running|stopped|gone>`): a catch-up covers what
   * was owed when it ran, so it is marked as done for this owner only — the same daemon dead after a
   * catch-up made while it ran (it took over from a dead one) or while it was stopped may owe more.
   */
  by: string;
}

/**
 * What the store's daemon may owe the owner index that no process will write now — a daemon writes
 * its records after its answers (CkptOptions.defer): a dead or stopped daemon's (a stopped one writes
 * nothing until it is continued), or those a running daemon took over from a dead one (its claim's
 * `ownersOwedSince`). Undefined: nothing owed.
 */
export async function ownersOwed(ctx: StoreContext): Promise<OwedRecords | undefined> {
  const info = await readClaim(ctx);
  if (info === undefined) return undefined;
  const status = info.pid === process.pid ? 'running' : processStatus(info.pid);
  const since = owedBy(info, status);
  return since === undefined ? undefined : { since, by: owerId(info.pid, info.startedAt, status) };
}

/** The owner part of a catch-up's mark (OwedRecords.by). */
export function owerId(pid: number, startedAt: unknown, status: 'running' | 'stopped' | 'gone'): string {
  return `${pid}@${String(startedAt)} ${status}`;
}

function owedBy(info: DaemonInfo, status: 'gone' | 'stopped' | 'running'): number | undefined {
  const taken = typeof info.ownersOwedSince === 'number' && Number.isSafeInteger(info.ownersOwedSince) && info.ownersOwedSince >= 0 ? info.ownersOwedSince : undefined;
  if (status === 'running') return taken;
  const started = typeof info.startedAt === 'string' ? Date.parse(info.startedAt) : NaN;
  return Math.min(Number.isFinite(started) ? started : 0, taken ?? Infinity);
}

/** The daemon serving the store, when its process is alive. */
export async function runningDaemon(ctx: StoreContext): Promise<DaemonInfo | undefined> {
  return (await daemonClaim(ctx)).running;
}

/**
 * Claims the store for this process: LOCKED (with the running daemon's url and pid) when a live
 * process holds the claim; a claim left by a dead process is taken over. Returns the release.
 */
export async function claimDaemon(ctx: StoreContext, info: Omit<DaemonInfo, 'pid' | 'startedAt'>): Promise<{ info: DaemonInfo; release: () => Promise<void> }> {
  const mine: DaemonInfo = { pid: process.pid, startedAt: new Date().toISOString(), ...info };
  await ctx.backend.withLock(CLAIM_LOCK, async () => {
    const current = await readClaim(ctx);
    if (current && current.pid !== process.pid && processAlive(current.pid)) {
      throw new CkptError('LOCKED', alreadyServes(current), { url: current.url, pid: current.pid });
    }
    await ctx.backend.write(DAEMON_CLAIM_KEY, Buffer.from(`${JSON.stringify(mine)}\n`));
    if (mine.port !== undefined) await ctx.backend.write(DAEMON_PORT_KEY, Buffer.from(`${mine.port}\n`));
  });
  return {
    info: mine,
    release: () =>
      ctx.backend.withLock(CLAIM_LOCK, async () => {
        const current = await readClaim(ctx);
        if (current?.pid === process.pid) await ctx.backend.remove(DAEMON_CLAIM_KEY);
      }),
  };
}

/**
 * The LOCKED message of a second daemon: one serves a store (the one `ckpt init` or a hook started
 * runs in the background, so a newcomer's `ckpt serve` meets it), and what to do instead.
 */
function alreadyServes(d: { url: string; pid: number }): string {
  return `a ckpt daemon already serves this store at ${d.url} (pid ${d.pid}): use that one (ckpt open, ckpt serve --print-token), or stop it first (kill ${d.pid})`;
}

/**
 * Checks, before listening, that no live daemon holds the store (the claim itself is written once the
 * address is known). Returns when a daemon before this one died holding it (daemonClaim's deadSince).
 */
export async function assertNoDaemon(ctx: StoreContext): Promise<{ deadSince?: number }> {
  const { running, deadSince } = await daemonClaim(ctx);
  if (running && running.pid !== process.pid) {
    throw new CkptError('LOCKED', alreadyServes(running), { url: running.url, pid: running.pid });
  }
  return deadSince === undefined ? {} : { deadSince };
}

/**
 * The port the store's daemon last listened on, so that a restarted daemon keeps the address that
 * installed HTTP hooks point at. Only a hint: anything but a port number reads as none.
 */
export async function lastDaemonPort(ctx: StoreContext): Promise<number | undefined> {
  const text = (await ctx.backend.read(DAEMON_PORT_KEY))?.toString('utf8').trim() ?? '';
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : 0;
  return port > 0 && port <= 65_535 ? port : undefined;
}

async function readClaim(ctx: StoreContext): Promise<DaemonInfo | undefined> {
  // Most stores have no daemon, and every owner-index read looks (ownersOwed): a stat answers
  // "none" without the exception a failed open throws (a claim made just after reads as a moment later).
  if (!(await ctx.backend.stat(DAEMON_CLAIM_KEY))) return undefined;
  const raw = await ctx.backend.read(DAEMON_CLAIM_KEY);
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw.toString('utf8')) as Partial<DaemonInfo>;
    if (typeof v.pid !== 'number' || !Number.isSafeInteger(v.pid) || v.pid <= 0 || typeof v.url !== 'string') return undefined;
    return v as DaemonInfo;
  } catch {
    return undefined; // a torn claim is no claim: the next start rewrites it
  }
}

