import { describe, expect, it } from 'vitest';
import type { PlanSnapshot } from '../index.js';
import { createConfirmer, planDigest, type ConfirmRequest } from './confirm-token.js';

const request: ConfirmRequest = { op: 'restore', workspace: 'w1', session: 's1', tag: '2', paths: ['b', 'a'], force: false, fork: false };

function snapshot(overrides: { lastSeq?: number; presentBlob?: string; entryBlob?: string } = {}): PlanSnapshot {
  return {
    lastSeq: overrides.lastSeq ?? 7,
    plan: { toSeq: 3, entries: [{ path: 'a', action: 'write', blob: overrides.entryBlob ?? 'e'.repeat(64), mode: 0o644 }], unchanged: [], skipped: [], drift: [] },
    present: new Map([['a', { path: 'a', state: 'file' as const, blob: overrides.presentBlob ?? 'p'.repeat(64), mode: 0o644 }]]),
  };
}

describe('confirmation tokens', () => {
  it('accepts the token for the same request and an unchanged snapshot (paths in any order)', () => {
    const c = createConfirmer();
    const { token } = c.issue(request, snapshot());
    expect(() => c.check(token, { ...request, paths: ['a', 'b', 'a'] })(snapshot())).not.toThrow();
  });

  it('is stale when the last seq, the plan or only the present content of a planned path moved', () => {
    const c = createConfirmer();
    const { token } = c.issue(request, snapshot());
    const check = c.check(token, request);
    expect(() => check(snapshot({ lastSeq: 8 }))).toThrow(expect.objectContaining({ code: 'TOKEN_STALE' }));
    expect(() => check(snapshot({ entryBlob: 'f'.repeat(64) }))).toThrow(expect.objectContaining({ code: 'TOKEN_STALE' }));
    expect(() => check(snapshot({ presentBlob: 'q'.repeat(64) }))).toThrow(expect.objectContaining({ code: 'TOKEN_STALE' }));
    expect(planDigest(snapshot({ presentBlob: 'q'.repeat(64) }))).not.toBe(planDigest(snapshot()));
  });

  it('refuses another server\'s token, an edited one, another request, and an expired one', () => {
    let now = 1_000_000;
    const c = createConfirmer({ ttlMs: 60_000, now: () => now });
    const { token } = c.issue(request, snapshot());
    expect(() => createConfirmer().check(token, request)).toThrow(expect.objectContaining({ code: 'TOKEN_INVALID' }));
    for (const other of [{ tag: '1' }, { session: 's2' }, { workspace: 'w2' }, { force: true }, { op: 'undo' as const }, { paths: ['a'] }, { fork: true }]) {
      expect(() => c.check(token, { ...request, ...other })).toThrow(expect.objectContaining({ code: 'TOKEN_INVALID' }));
    }
    const [p, body, mac] = token.split('.');
    const edited = Buffer.from(Buffer.from(body!, 'base64url').toString().replace('"force":false', '"force":true')).toString('base64url');
    expect(() => c.check(`${p}.${edited}.${mac}`, { ...request, force: true })).toThrow(expect.objectContaining({ code: 'TOKEN_INVALID' }));
    expect(() => c.check('', request)).toThrow(expect.objectContaining({ code: 'TOKEN_INVALID' }));
    now += 60_001;
    expect(() => c.check(token, request)).toThrow(expect.objectContaining({ code: 'TOKEN_STALE' }));
  });
});
