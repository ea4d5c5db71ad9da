// The hot state must agree with replay() on what both compute, folded at once or in two parts
// through its persisted form (model-based: random logs of turns, captures, settles and restores).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventBase, FileImage } from '../format/event.js';
import { decodeHotState, emptyHotState, encodeHotState, foldHot } from './hot-state.js';
import { replay } from './replay.js';
import { retentionEvent, retentionEventFromIndex } from './retention.js';
import type { RetentionPolicy } from '../context.js';

const path = fc.constantFrom('a', 'b', 'c/d', 'e');
const image = (p: string, n: number): FileImage => (n % 3 === 0 ? { path: p, state: 'absent' } : { path: p, state: 'file', blob: String(n).padStart(64, '0'), mode: 0o100644 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('turn'), back: fc.nat(2) }),
  fc.record({ kind: fc.constant('capture'), paths: fc.uniqueArray(path, { minLength: 1, maxLength: 3 }), call: fc.option(fc.nat(5)), restore: fc.boolean() }),
  fc.record({ kind: fc.constant('settle'), paths: fc.uniqueArray(path, { minLength: 1, maxLength: 3 }), n: fc.nat(9) }),
  fc.record({ kind: fc.constant('restore'), paths: fc.uniqueArray(path, { maxLength: 3 }), end: fc.constantFrom('committed', 'aborted', 'open') }),
);

type Op =
  | { kind: 'turn'; back: number }
  | { kind: 'capture'; paths: string[]; call: number | null; restore: boolean }
  | { kind: 'settle'; paths: string[]; n: number }
  | { kind: 'restore'; paths: string[]; end: string };

function buildLog(ops: Op[]): EventBase[] {
  const out: EventBase[] = [];
  const push = (e: Record<string, unknown>) => out.push({ v: 1, seq: out.length + 1, at: 't', ...e } as EventBase);
  push({ type: 'session', kind: 'root' });
  let turn = 0;
  let k = 0;
  let restores = 0;
  for (const o of ops) {
    if (o.kind === 'turn') {
      turn = Math.max(1, turn + 1 - o.back * 2); // sometimes a lower number, as after a rewind
      k = 0;
      push({ type: 'turn', turn });
    } else if (o.kind === 'capture') {
      k++;
      push({ type: 'capture', tag: `${turn}.${k}`, turn, k, tool: o.restore ? 'restore' : 'Edit', ...(o.call !== null ? { callId: `c${o.call}` } : {}), files: o.paths.map((p) => image(p, k)) });
    } else if (o.kind === 'settle') {
      push({ type: 'settle', tag: `${turn}.${k}`, files: o.paths.map((p) => image(p, o.n)) });
    } else {
      const id = `r${++restores}`;
      k++;
      push({ type: 'capture', tag: `${turn}.${k}`, turn, k, tool: 'restore', restoreId: id, files: [] });
      if (o.end === 'aborted') push({ type: 'restore_aborted', id });
      else {
        push({ type: 'restore_started', id, plan: o.paths.map((p, i) => (i % 2 ? { path: p, action: 'delete' } : { path: p, action: 'write', blob: 'f'.repeat(64), mode: 0o100644 })) });
        if (o.end === 'committed') push({ type: 'restore_committed', id, result: {} });
      }
    }
  }
  return out;
}

describe('hot state', () => {
  it('agrees with replay() on turn, next K, known, recent captures and unfinished restores; folds in parts through its persisted form', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.nat(), (ops, cut) => {
        const events = buildLog(ops);
        const full = replay(events);
        const hot = foldHot(emptyHotState(), events);
        expect(hot.turn).toBe(full.turn);
        expect(hot.nextK).toBe(full.nextK);
        expect([...hot.known]).toEqual([...full.known]);
        expect(hot.recent.map((r) => r.tag)).toEqual(full.captures.slice(-256).map((c) => c.tag));
        const open = new Set(full.openRestores.map((r) => r.id));
        const abandoned = full.captures.filter((c) => typeof c.restoreId === 'string' && !events.some((e) => (e.type === 'restore_started' || e.type === 'restore_aborted' || e.type === 'restore_committed') && e.id === c.restoreId));
        expect([...hot.unclosedRestores].sort()).toEqual([...new Set([...open, ...abandoned.map((c) => String(c.restoreId))])].sort());
        const at = cut % (events.length + 1);
        const first = decodeHotState(JSON.parse(JSON.stringify(encodeHotState(foldHot(emptyHotState(), events.slice(0, at))))))!;
        expect(foldHot(first, events.slice(at))).toEqual(hot);
      }),
      { numRuns: 1000 },
    );
  });

  it('a persisted state of the wrong shape is refused', () => {
    const good = encodeHotState(foldHot(emptyHotState(), buildLog([{ kind: 'capture', paths: ['a'], call: 1, restore: false }])));
    expect(decodeHotState(good)).toBeDefined();
    for (const bad of [{ ...good, retention: undefined }, { ...good, retention: { prunedThrough: 0, lastAt: '', turns: [{ seq: 3, prevAt: '', captures: 0 }, { seq: 2, prevAt: '', captures: 0 }] } }, null, 7, { ...good, turn: -1 }, { ...good, known: [['a', { path: 'b', state: 'file' }]] }, { ...good, known: [['a', { path: 'a', state: 'weird' }]] }, { ...good, recent: [{ tag: 1 }] }, { ...good, unclosedRestores: [3] }]) {
      expect(decodeHotState(bad)).toBeUndefined();
    }
  });
});

// A turn's start applies the retention policy from the hot state's index instead of the whole log
// (issue 28): the same prune event as from the events, for any log and policy, folded at once or in
// two parts through the persisted form.
describe('retention index', () => {
  const HOUR = 3_600_000;
  const logOp = fc.oneof(
    fc.record({ kind: fc.constant('turn' as const), hours: fc.nat(30) }),
    fc.record({ kind: fc.constant('capture' as const), hours: fc.nat(30) }),
    fc.record({ kind: fc.constant('other' as const), hours: fc.nat(30) }),
  );
  const policy: fc.Arbitrary<RetentionPolicy | false> = fc.oneof(
    fc.constant(false as const),
    fc.record({ keepTurns: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }), olderThanMs: fc.option(fc.integer({ min: 0, max: 200 }).map((h) => h * HOUR), { nil: undefined }), keepCheckpoints: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }) }, { requiredKeys: [] }),
  );
  it('gives the prune event retentionEvent() gives from the events (model: turns, captures, prunes at random times)', () => {
    fc.assert(
      fc.property(fc.array(logOp, { maxLength: 60 }), fc.array(policy, { minLength: 1, maxLength: 4 }), fc.nat(), (ops, policies, cut) => {
        const events: EventBase[] = [];
        let t = Date.UTC(2026, 0, 1);
        let turn = 0;
        const push = (e: Record<string, unknown>) => events.push({ v: 1, seq: events.length + 1, at: new Date(t).toISOString(), ...e } as EventBase);
        push({ type: 'session', kind: 'root' });
        let p = 0;
        for (const o of ops) {
          t += o.hours * HOUR;
          if (o.kind === 'turn') {
            push({ type: 'turn', turn: ++turn });
            // As startTurn does: a policy applied at each turn's start appends its prune event.
            const policyNow = policies[p++ % policies.length]!;
            const e = retentionEvent(events, policyNow, t + 100 * HOUR);
            if (e) push(e as Record<string, unknown>);
          } else if (o.kind === 'capture') push({ type: 'capture', tag: `${turn}.1`, turn, k: 1, tool: 'Edit', files: [] });
          else push({ type: 'settle', tag: `${turn}.1`, files: [] });
        }
        const hot = foldHot(emptyHotState(), events);
        const at = cut % (events.length + 1);
        const parted = foldHot(decodeHotState(JSON.parse(JSON.stringify(encodeHotState(foldHot(emptyHotState(), events.slice(0, at))))))!, events.slice(at));
        expect(parted.retention).toEqual(hot.retention);
        for (const pol of policies) {
          for (const now of [t, t + 50 * HOUR, t + 1000 * HOUR]) expect(retentionEventFromIndex(hot.retention, pol, now)).toEqual(retentionEvent(events, pol, now));
        }
      }),
      { numRuns: 1000 },
    );
  });
});

// Fuzz defects (issue 16): a snapshot is untrusted like the log; its known images and open plans
// were accepted with any blob id or path.
describe('decodeHotState on a forged snapshot', () => {
  const base = (): Record<string, unknown> => encodeHotState(emptyHotState()) as Record<string, unknown>;
  it.each([
    ['a known image with a blob that is not an id', { known: [['a', { path: 'a', state: 'file', blob: [] }]] }],
    ['a known path that escapes', { known: [['../x', null]] }],
    ['an open plan with an escaping path', { openPlans: [['r1', [{ path: '../x', action: 'delete' }]]] }],
    ['an open plan under a restore id that is a path', { openPlans: [['../r', []]] }],
    ['an unclosed restore id that is a path', { unclosedRestores: ['../r'] }],
  ])('refuses %s', (_name, patch) => {
    expect(decodeHotState(base())).toBeDefined();
    expect(decodeHotState({ ...base(), ...patch })).toBeUndefined();
  });
});

