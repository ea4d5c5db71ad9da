// ckpt op: opening a long session — a fresh store object, its workspace and the session (open +
// replay of its event log). `buildLongSession` writes such a session first (setup).
import { closeStore, loadCkpt, need, sessionId } from '../ckpt-api.js';
import { createPrng } from '../gen/prng.js';
import { timed } from '../measure.js';
import { startSession } from './session.js';

const WORDS = 'please fix the failing test in parser and then run the build again check why lint fails on this file'.split(' ');
const TOOLS = ['Read', 'Edit', 'Write', 'Bash', 'Grep', 'Glob'];

function agentEvent(r: ReturnType<typeof createPrng>, n: number): Record<string, unknown> {
  const text = Array.from({ length: r.range(8, 60) }, () => r.pick(WORDS)).join(' ');
  const k = n % 3;
  if (k === 0) return { type: 'message', role: r.chance(0.3) ? 'user' : 'assistant', text };
  if (k === 1) return { type: 'tool_call', id: `call_${n}`, tool: r.pick(TOOLS), input: { path: `src/f${r.int(500)}.ts`, note: text.slice(0, 80) } };
  return { type: 'tool_result', id: `call_${n - 1}`, ok: r.chance(0.9), output: text };
}

/** Events between two turns of the long session (turns go through session.turn(), one call each). */
const TURN_EVERY = 5000;

/** Writes a session of `events` events (agent events, a turn every TURN_EVERY) and returns its id. */
export async function buildLongSession(storeDir: string, root: string, events: number, log: (m: string) => void): Promise<string> {
  const open = await startSession(storeDir, root, 'bench open-session');
  try {
    const append = need(open.session, 'append', 'session');
    const r = createPrng(7, 7);
    let written = 2; // the session event and turn 1
    let batch: Record<string, unknown>[] = [];
    let turns = 1;
    while (written < events) {
      if (written % TURN_EVERY === 0 && typeof open.session.turn === 'function') {
        if (batch.length) await append(batch);
        batch = [];
        await open.session.turn({ messageCount: ++turns * 10 });
      } else batch.push(agentEvent(r, written));
      written++;
      if (batch.length >= 5000) {
        await append(batch);
        batch = [];
      }
      if (written % 25000 === 0) log(`  open-session: ${written.toLocaleString('en-US')} events written`);
    }
    if (batch.length) await append(batch);
    return sessionId(open.session);
  } finally {
    await closeStore(open.store);
  }
}

/** Session methods that replay the log, best first: opening a handle may be lazy, replay is not. */
const REPLAY_METHODS = ['replay', 'state', 'checkpoints', 'events'];

/** Milliseconds to open the store, the workspace and session `id` from scratch and replay its log. */
export async function openSession(storeDir: string, root: string, id: string): Promise<{ ms: number; replayedWith: string | null }> {
  const ckpt = await loadCkpt();
  let store;
  let replayedWith: string | null = null;
  try {
    const ms = await timed(async () => {
      store = await ckpt.openStore({ dir: storeDir });
      const ws = await need(store, 'openWorkspace', 'store')(root);
      const session = (await need(ws, 'getSession', 'workspace', ['get'])(id)) as Record<string, unknown>;
      const m = REPLAY_METHODS.find((name) => typeof session[name] === 'function');
      if (m) {
        replayedWith = m;
        await (session[m] as () => Promise<unknown>).call(session);
      }
    });
    return { ms, replayedWith };
  } finally {
    await closeStore(store);
  }
}
