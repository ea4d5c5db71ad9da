// The resident daemon over a long session (issue 28): the work one hook event costs must not grow
// with the session's history. A real in-process daemon (its live feed following the logs through
// folder watches and its poll, its cached session handle) receives Claude Code's Edit
// capture+settle pairs over HTTP; the event logs' work counters (bytes read, events decoded or
// copied) are compared per event early in the session and ten times later. Work is counted, not
// timed: a count does not depend on the machine's load. (The daemon's live feed used to re-copy
// every decoded event of the log on each append, and kept them all.)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { eventLogWork } from '../src/storage/event-log.js';
import { openStore } from '../src/store.js';
import { claudeEvents as ev, claudeSession } from './fixtures/claude-events.js';
import { createClient } from './helpers/http.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let daemon: RunningDaemon | undefined;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-flat-appends-');
});

afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
  await dirs.cleanup();
});

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('costs each hook event the same work at event ~400 as at event ~40 (bytes read and events decoded by the logs)', async () => {
  const store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
  const client = createClient(daemon.url, daemon.token);
  const ws = dirs.workspace;
  await store.openWorkspace(ws);
  const s = claudeSession(ws);
  const hook = async (body: unknown) => {
    const r = await client.call('POST', '/hooks/claude', { body });
    expect(r.status).toBe(200);
    expect(r.json()).toEqual({});
  };
  for (let i = 0; i < 20; i++) await writeFile(join(ws, `f${i}.ts`), `export const v${i} = 0;\n`);
  await hook(ev.sessionStart(s));
  let pair = 0;
  /** `pairs` Edit capture+settle pairs (a new prompt every 25): 2 log events each, 1 more per prompt. */
  const edits = async (pairs: number) => {
    for (let j = 0; j < pairs; j++, pair++) {
      if (pair % 25 === 0) await hook(ev.userPromptSubmit(s, `prompt ${pair}`));
      const file = join(ws, `f${pair % 20}.ts`);
      const input = { file_path: file, old_string: 'a', new_string: 'b', replace_all: false };
      await hook(ev.preToolUse(s, 'Edit', input, `toolu_${pair}`));
      await writeFile(file, `export const v = ${pair};\n`);
      await hook(ev.postToolUse(s, 'Edit', input, `toolu_${pair}`, { filePath: file }));
    }
    // The live feed reads behind the answers (watch events, its 1 s poll): let it catch up.
    await settle(1200);
  };
  /** The logs' work per pair over `pairs` pairs. */
  const measure = async (pairs: number) => {
    const before = { ...eventLogWork };
    await edits(pairs);
    return { bytes: (eventLogWork.bytesRead - before.bytesRead) / pairs, events: (eventLogWork.eventsDecoded - before.eventsDecoded) / pairs };
  };
  await edits(20);
  const early = await measure(20); // log events ~40 to ~80
  await edits(160);
  const late = await measure(20); // log events ~400 to ~440
  // Each pair is decoded a few times (the hook's own reads, the feed) and reads a few KB: the same
  // at both points. Copying or re-reading the history would make the late window several times the early one.
  expect(early.events, JSON.stringify({ early, late })).toBeGreaterThan(0);
  expect(late.events, JSON.stringify({ early, late })).toBeLessThanOrEqual(early.events * 1.25 + 1);
  expect(late.bytes, JSON.stringify({ early, late })).toBeLessThanOrEqual(early.bytes * 1.25 + 2048);
}, 120_000);
