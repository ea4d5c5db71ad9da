// The event decoder is the gate for everything ckpt reads back from a log: arbitrary bytes and
// mutations of valid events either decode to an event whose paths are clean, or fail LOG_CORRUPT —
// never another error, never a crash.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CkptError } from '../errors.js';
import { checkNewEvent, decodeEvent, encodeEvent, type EventBase } from './event.js';
import { isStoredPath, validateRestorePlan } from './stored-path.js';

const BLOB = 'a'.repeat(64);
const AT = '2026-12-08T00:00:00.000Z';
const VALID: EventBase[] = [
  { v: 1, seq: 1, type: 'session', at: AT, kind: 'root' },
  { v: 1, seq: 2, type: 'turn', at: AT, turn: 1 },
  { v: 1, seq: 3, type: 'capture', at: AT, tag: '1.1', turn: 1, k: 1, tool: 'Edit', files: [{ path: 'a/b.txt', state: 'file', blob: BLOB, mode: 420 }, { path: 'c', state: 'absent', newDirs: 1 }] },
  { v: 1, seq: 4, type: 'settle', at: AT, tag: '1.1', files: [{ path: 'l', state: 'symlink', target: '../x' }] },
  { v: 1, seq: 5, type: 'restore_started', at: AT, id: 'r1', to: '1', recovery: '1.2', plan: [{ path: 'a/b.txt', action: 'write', blob: BLOB, mode: 420 }, { path: 'c', action: 'delete' }] },
  { v: 1, seq: 6, type: 'restore_committed', at: AT, id: 'r1', result: {} },
  { v: 1, seq: 7, type: 'conflict', at: AT, path: 'a/b.txt', otherSession: 's', expected: null, actual: null },
];

/** Every path-like field of a decoded event. */
function pathsOf(e: EventBase): unknown[] {
  const list = (v: unknown) => (Array.isArray(v) ? (v as { path: unknown }[]).map((f) => f?.path) : []);
  if (e.type === 'capture' || e.type === 'settle') return list(e.files);
  if (e.type === 'restore_started') return list(e.plan);
  return e.type === 'conflict' ? [e.path] : [];
}

function decodeOrCode(line: string): EventBase | string {
  try {
    return decodeEvent(line, { line: 1 });
  } catch (err) {
    if (err instanceof CkptError) return err.code;
    throw err;
  }
}

describe('decodeEvent', () => {
  it('accepts the valid events', () => {
    for (const e of VALID) expect(decodeEvent(encodeEvent(e).trimEnd(), { line: 1 })).toEqual(e);
    const inline = { ...VALID[2]!, inline: { [BLOB]: 'Q0tCAQ==' } };
    expect(decodeEvent(encodeEvent(inline).trimEnd(), { line: 1 })).toEqual(inline);
  });

  it.each([
    ['plan path ../x', { ...VALID[4]!, plan: [{ path: '../outside/x', action: 'delete' }] }],
    ['absolute capture path', { ...VALID[2]!, files: [{ path: '/etc/passwd', state: 'absent' }] }],
    ['empty segment', { ...VALID[3]!, files: [{ path: 'a//b', state: 'absent' }] }],
    ['dot segment', { ...VALID[3]!, files: [{ path: './a', state: 'absent' }] }],
    ['NUL', { ...VALID[6]!, path: 'a\0b' }],
    ['a time that is no time', { ...VALID[2]!, at: 'yesterday' }],
    ['blob id that is a path', { ...VALID[4]!, plan: [{ path: 'a', action: 'write', blob: '../../x' }] }],
    ['restore id that is a path', { ...VALID[4]!, id: '../x' }],
    ['unknown action', { ...VALID[4]!, plan: [{ path: 'a', action: 'chmod' }] }],
    ['a mode that is no stat mode', { ...VALID[2]!, files: [{ path: 'a', state: 'file', blob: BLOB, mode: 99999999 }] }],
    ['a plan mode that is no stat mode', { ...VALID[4]!, plan: [{ path: 'a', action: 'write', blob: BLOB, mode: 0o200000 }] }],
    ['files not a list', { ...VALID[2]!, files: 'a' }],
    ['stageDirs outside', { ...VALID[2]!, restoreId: 'r', stageDirs: ['..'] }],
    // Fuzz defect (issue 16): any string passed as a capture's tag; reading the log then failed INVALID_ARGUMENT.
    ['capture tag that is not a tag', { ...VALID[2]!, tag: '\udc80' }],
    ['inline content that is not an object', { ...VALID[2]!, inline: ['QUJD'] }],
    ['inline content of a blob the files do not name', { ...VALID[2]!, inline: { ['b'.repeat(64)]: 'QUJD' } }],
    ['inline content keyed by a path', { ...VALID[2]!, inline: { '../x': 'QUJD' } }],
    ['inline content that is not base64', { ...VALID[2]!, inline: { [BLOB]: 'not base64!' } }],
    ['inline content that is not a string', { ...VALID[2]!, inline: { [BLOB]: 12 } }],
    ['inline content that is too long', { ...VALID[2]!, inline: { [BLOB]: 'QUJD'.repeat(30_000) } }],
  ])('refuses %s as LOG_CORRUPT', (_name, event) => {
    expect(decodeOrCode(JSON.stringify(event))).toBe('LOG_CORRUPT');
    expect(() => checkNewEvent(event as EventBase)).toThrowError(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('arbitrary strings decode to a clean event or fail LOG_CORRUPT', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.string({ unit: 'binary' })), (line) => {
        const r = decodeOrCode(line);
        if (typeof r === 'string') expect(r).toBe('LOG_CORRUPT');
        else for (const p of pathsOf(r)) expect(isStoredPath(p)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('mutated valid events decode to a clean event or fail LOG_CORRUPT', () => {
    const value = fc.oneof(
      fc.constantFrom('../x', '/abs', '', '.', 'a/../../b', 'ok/path', 'a\\b', 'x\0', BLOB, 'write', 'delete', 'file', 'absent'),
      fc.integer(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.dictionary(fc.constantFrom('path', 'action', 'state', 'blob'), fc.string()),
    );
    fc.assert(
      fc.property(fc.nat(VALID.length - 1), fc.array(fc.tuple(fc.constantFrom('path', 'files', 'plan', 'id', 'blob', 'action', 'state', 'turn', 'k', 'tag', 'stageDirs', 'restoreId', 'inline'), value, fc.nat()), { minLength: 1, maxLength: 3 }), (which, edits) => {
        const e = structuredClone(VALID[which]!) as Record<string, unknown>;
        for (const [key, v, at] of edits) {
          const lists = [e.files, e.plan].filter(Array.isArray) as Record<string, unknown>[][];
          const list = lists[at % Math.max(1, lists.length)];
          const item = list?.[at % Math.max(1, list.length)];
          if (typeof item === 'object' && item !== null && ['path', 'blob', 'action', 'state'].includes(key)) item[key] = v;
          else e[key] = v;
        }
        const r = decodeOrCode(JSON.stringify(e));
        if (typeof r === 'string') expect(r).toBe('LOG_CORRUPT');
        else for (const p of pathsOf(r)) expect(isStoredPath(p)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('validateRestorePlan (plans read from blobs too)', () => {
  it('accepts a clean plan and refuses anything else as LOG_CORRUPT', () => {
    expect(validateRestorePlan(VALID[4]!.plan)).toEqual(VALID[4]!.plan);
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        try {
          const plan = validateRestorePlan(v);
          for (const e of plan) expect(isStoredPath(e.path)).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(CkptError);
          expect((err as CkptError).code).toBe('LOG_CORRUPT');
        }
      }),
      { numRuns: 500 },
    );
  });
});

// Fuzz defect (issue 16): any number passed as the format version, so a line of another format (or
// a mangled one) was read as a format-1 event.
describe('decodeEvent format version', () => {
  it.each([1.5, 2, 0, -1])('refuses v %s as LOG_CORRUPT', (v) => {
    expect(decodeOrCode(JSON.stringify({ ...VALID[1]!, v }))).toBe('LOG_CORRUPT');
  });
  it('says a later version was written by a newer ckpt, naming the file', () => {
    expect(() => decodeEvent(JSON.stringify({ ...VALID[1]!, v: 2 }), { file: 'x/events.jsonl', line: 3 })).toThrow(/line 3 of x\/events.jsonl is of format version 2, written by a newer ckpt/);
  });
});

