// open-session: a session of 100,000 events (agent messages, tool calls and results, a turn every 5,000) is
// written once; then a fresh store object opens the workspace and the session and replays it (the
// first of session.replay/state/checkpoints/events the library has; see `replayed_with`) —
// vs reading the session's event log and JSON.parse of every line (the floor).
import type { BenchContext } from '../context.js';
import { findEventLog, readAndParse } from '../baselines/log-parse.js';
import { measureInterleaved } from '../measure.js';
import { buildLongSession, openSession } from '../ops/open-session.js';
import { makeEntry, type Entry } from '../report.js';
import { newStoreDir } from './shared.js';
import { promises as fsp } from 'node:fs';

export const SESSION_EVENTS = 100_000;

export async function openSessionFigure(ctx: BenchContext): Promise<Entry> {
  const storeDir = newStoreDir(ctx, 'open');
  let id: string | undefined;
  let setupError: Error | undefined;
  try {
    ctx.log(`  (setup) writing a ${SESSION_EVENTS.toLocaleString('en-US')}-event session`);
    id = await buildLongSession(storeDir, ctx.tree.root, SESSION_EVENTS, ctx.log);
  } catch (err) {
    setupError = err instanceof Error ? err : new Error(String(err));
  }
  const log = id ? await findEventLog(storeDir, id) : undefined;
  let lines: number | null = null;
  let replayedWith: string | null = null;
  const r = await measureInterleaved(ctx.heavy, {
    ckpt: id
      ? async () => {
          const o = await openSession(storeDir, ctx.tree.root, id as string);
          replayedWith = o.replayedWith;
          return o.ms;
        }
      : undefined,
    floor: log
      ? async () => {
          const p = await readAndParse(log);
          lines = p.lines;
          return p.ms;
        }
      : undefined,
  });
  const logBytes = log ? (await fsp.stat(log)).size : null;
  return makeEntry({
    name: 'open-session',
    unit: 'ms',
    ckpt: setupError ?? r.ckpt,
    baseline: 'read + JSON.parse of the event log (floor)',
    base: r.floor ?? (setupError ? undefined : new Error('event log not found in the store')),
    goal: 'ratio ≤ 1.2 (issue 31)',
    extra: { events: lines, log_bytes: logBytes, replayed_with: replayedWith ? `session.${replayedWith}()` : null },
  });
}
