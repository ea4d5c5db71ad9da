// The store's live feed (DESIGN §10 "Daemon"): every event appended to any session log of the store,
// by any process (CLI, command hooks, the library, the daemon itself), delivered once, in seq order
// per session. Other processes write only to the store, so the feed watches the store's workspace and
// session folders (inotify through fs.watch: no debounce, so an append is seen within milliseconds)
// and reads only what was appended (the event-log handle decodes new bytes only). A slow poll of the
// logs' sizes backs the watches up (a watch can be lost when a folder is replaced). A shared store
// (PostgreSQL + S3, issue 33) has no folder to watch: its appends from every machine arrive through
// PostgreSQL's LISTEN/NOTIFY (`subscribe`); a broken subscription is renewed, followed by a full sync,
// and the poll backs it up as well.
import { CkptError } from '../errors.js';
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { StoreContext } from '../context.js';
import type { AppendListener } from '../storage/shared/shared-notify.js';
import type { EventBase } from '../format/event.js';
import { withoutInline } from '../format/inline-blobs.js';
import { createEventLog, type EventLog, type LogPosition } from '../storage/event-log.js';

export interface FeedEvent {
  /** Store id of the workspace (20 hex) and its root. */
  workspace: string;
  root: string;
  /** The machine the workspace is on (shared stores). */
  machine?: string;
  session: string;
  event: EventBase;
}

export interface LogFeed {
  /** Reads every known log now and delivers what was appended (the poll does this periodically). */
  sync(): Promise<void>;
  close(): void;
}

export interface LogFeedOptions {
  /** Called with each batch of new events, in seq order per session. */
  onEvents: (events: FeedEvent[]) => void;
  /** Called when a log cannot be read (LOG_CORRUPT…); the feed goes on with the other logs. */
  onError?: (err: unknown, where: { workspace: string; session: string }) => void;
  /** Size poll interval backing the watches up (default 1000 ms; 0 = none). */
  pollMs?: number;
  /** A shared store's append notifications (`store.subscribeAppends`): used instead of folder watches. */
  subscribe?: (listener: AppendListener, onError: (err: Error) => void) => Promise<() => Promise<void>>;
  /** Wait before renewing a broken subscription (default 1000 ms). */
  resubscribeMs?: number;
}

interface Tracked {
  workspace: string;
  root: string;
  machine?: string;
  session: string;
  log: EventLog;
  lastSeq: number;
  /** Where the events delivered so far end: the next read decodes only the bytes after it. */
  pos: LogPosition | undefined;
  size: number;
  running: Promise<void> | undefined;
  again: boolean;
}

const EVENTS = 'events.jsonl';
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** A session log's key, as a notification names it (untrusted: anything else is ignored). */
const LOG_KEY = /^workspaces\/([0-9a-f]{20})\/sessions\/([A-Za-z0-9][A-Za-z0-9_-]{0,127})\/events\.jsonl$/;

/** Starts the feed: logs that exist now are delivered from their current end on. */
export async function createLogFeed(ctx: StoreContext, options: LogFeedOptions): Promise<LogFeed> {
  const { backend } = ctx;
  // Watching works on a store folder; a shared store's appends come through its NOTIFY feed instead.
  const dir = ctx.dir;
  if (dir === undefined && !options.subscribe) throw new CkptError('INVALID_ARGUMENT', 'a live feed of a shared store needs its append notifications');
  const logs = new Map<string, Tracked>();
  const watchers = new Map<string, FSWatcher>();
  const roots = new Map<string, { root: string; machine?: string }>();
  let closed = false;

  const watchDir = (key: string, onChange: (name: string | null) => void): void => {
    if (closed || dir === undefined || watchers.has(key)) return;
    try {
      const w = watch(join(dir, key), { persistent: false }, (_type, name) => onChange(name === null ? null : String(name)));
      w.on('error', () => {
        w.close();
        watchers.delete(key);
      });
      watchers.set(key, w);
    } catch {
      // Missing (not created yet, or removed): the parent's watch or the poll brings it in later.
    }
  };

  async function rootOf(wid: string): Promise<{ root: string; machine?: string }> {
    const known = roots.get(wid);
    if (known) return known;
    const raw = await backend.read(`workspaces/${wid}/workspace.json`);
    let info: { root: string; machine?: string } = { root: '' };
    try {
      const v = raw ? (JSON.parse(raw.toString('utf8')) as { root?: unknown; machine?: unknown }) : {};
      info = { root: String(v.root ?? ''), ...(typeof v.machine === 'string' ? { machine: v.machine } : {}) };
    } catch {}
    if (info.root) roots.set(wid, info);
    return info;
  }

  async function addWorkspace(wid: string, fromStart: boolean): Promise<void> {
    if (!/^[0-9a-f]{20}$/.test(wid)) return;
    const sessionsKey = `workspaces/${wid}/sessions`;
    watchDir(`workspaces/${wid}`, (name) => {
      if (name === 'sessions' || name === null) void addSessions(wid, true);
    });
    watchDir(sessionsKey, (name) => {
      if (name === null) void addSessions(wid, true);
      else if (SESSION_ID.test(name)) void addSession(wid, name, true);
    });
    await addSessions(wid, fromStart);
  }

  async function addSessions(wid: string, fromStart: boolean): Promise<void> {
    watchDir(`workspaces/${wid}/sessions`, (name) => {
      if (name === null) void addSessions(wid, true);
      else if (SESSION_ID.test(name)) void addSession(wid, name, true);
    });
    for (const sid of await backend.children(`workspaces/${wid}/sessions`)) await addSession(wid, sid, fromStart);
  }

  /** Starts following one log: from its start when it appeared while the feed runs, else from its end. */
  async function addSession(wid: string, sid: string, fromStart: boolean): Promise<void> {
    if (!SESSION_ID.test(sid)) return;
    const dirKey = `workspaces/${wid}/sessions/${sid}`;
    const key = `${dirKey}/${EVENTS}`;
    let t = logs.get(key);
    if (!t) {
      const log = createEventLog({ backend, key });
      t = { workspace: wid, ...(await rootOf(wid)), session: sid, log, lastSeq: 0, pos: undefined, size: 0, running: undefined, again: false };
      if (logs.has(key)) return;
      logs.set(key, t);
      if (!fromStart) {
        try {
          t.pos = await log.endPosition();
          t.lastSeq = t.pos?.seq ?? 0;
          t.size = (await backend.stat(key))?.size ?? 0;
        } catch (err) {
          options.onError?.(err, { workspace: wid, session: sid });
        }
      }
    }
    watchDir(dirKey, (name) => {
      if (name === EVENTS || name === null) void readNew(key);
    });
    if (fromStart) await readNew(key);
  }

  /** Reads what was appended to a log since the last read; runs once at a time per log. */
  function readNew(key: string): Promise<void> {
    const t = logs.get(key);
    if (!t || closed) return Promise.resolve();
    if (t.running) {
      t.again = true;
      return t.running;
    }
    t.running = (async () => {
      do {
        t.again = false;
        try {
          const st = await backend.stat(key);
          if (!st) {
            // Removed: forget it (a session recreated under the id is followed from its start).
            logs.delete(key);
            watchers.get(key.slice(0, -EVENTS.length - 1))?.close();
            watchers.delete(key.slice(0, -EVENTS.length - 1));
            return;
          }
          if (st.size < t.size) {
            // replaced by a shorter log: read it afresh
            t.lastSeq = 0;
            t.pos = undefined;
          }
          t.size = st.size;
          // Only the bytes appended since the last delivery are read and decoded (nothing of the log is
          // kept): a whole read only for a new log, or one replaced by another (its position no longer
          // matches), whose events after the last seq delivered are delivered.
          const since = t.pos && (await t.log.readSince(t.pos));
          let events: EventBase[];
          if (since) {
            events = since.events;
            t.pos = since.pos;
          } else {
            const all = await t.log.read();
            t.pos = t.log.position();
            if (all.length < t.lastSeq) t.lastSeq = 0;
            events = all.slice(t.lastSeq);
          }
          if (events.length === 0) continue;
          t.lastSeq = events.at(-1)!.seq;
          // Without inline content: listeners see what was recorded, not the bytes (and the buffer stays small).
          options.onEvents(events.map((event) => ({ workspace: t.workspace, root: t.root, ...(t.machine ? { machine: t.machine } : {}), session: t.session, event: withoutInline(event) })));
        } catch (err) {
          options.onError?.(err, { workspace: t.workspace, session: t.session });
        }
      } while (t.again && !closed);
    })().finally(() => {
      t.running = undefined;
    });
    return t.running;
  }

  async function scanWorkspaces(fromStart: boolean): Promise<void> {
    watchDir('workspaces', () => void scanWorkspaces(true).catch(() => {}));
    for (const wid of await backend.children('workspaces')) await addWorkspace(wid, fromStart);
  }

  async function sync(): Promise<void> {
    await scanWorkspaces(true);
    await Promise.all([...logs.keys()].map((key) => readNew(key)));
  }

  await scanWorkspaces(false);
  let unsubscribe: (() => Promise<void>) | undefined;
  let renew: NodeJS.Timeout | undefined;
  const onNotify: AppendListener = ({ key }) => {
    const m = LOG_KEY.exec(key);
    if (!m || closed) return;
    if (logs.has(key)) void readNew(key);
    else void addWorkspace(m[1]!, true).catch((err: unknown) => options.onError?.(err, { workspace: m[1]!, session: m[2]! }));
  };
  const subscribe = async (): Promise<void> => {
    if (closed || !options.subscribe) return;
    unsubscribe = await options.subscribe(onNotify, (err) => {
      options.onError?.(err, { workspace: '', session: '' });
      unsubscribe = undefined;
      scheduleRenew();
    });
  };
  const scheduleRenew = (): void => {
    if (closed || renew) return;
    renew = setTimeout(() => {
      renew = undefined;
      // What was appended while nobody listened is read by the sync after the renewal.
      subscribe()
        .then(() => sync())
        .catch((err: unknown) => {
          options.onError?.(err, { workspace: '', session: '' });
          scheduleRenew();
        });
    }, options.resubscribeMs ?? 1000);
    renew.unref();
  };
  await subscribe();
  const poll = options.pollMs === 0 ? undefined : setInterval(() => void sync().catch(() => {}), options.pollMs ?? 1000);
  poll?.unref();

  return {
    sync,
    close() {
      closed = true;
      if (poll) clearInterval(poll);
      if (renew) clearTimeout(renew);
      void unsubscribe?.();
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
