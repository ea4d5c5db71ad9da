import { describe, expect, it } from 'vitest';
import { createStaleHooks } from './stale-hooks.js';

describe('stale HTTP hooks', () => {
  it('an agent process that started before its project\'s hooks were re-pointed is stale; one that started after is not', () => {
    let t = 0;
    const stale = createStaleHooks(() => t);
    t = 1;
    stale.started('old');
    expect(stale.staleFrom('/p', 'old')).toBeUndefined(); // nothing re-pointed
    t = 2;
    stale.repointed('/p', [4100]);
    expect(stale.staleFrom('/p', 'old')).toEqual([4100]);
    expect(stale.staleFrom('/p', 'unknown')).toEqual([4100]); // never seen starting: it may hold the old hooks
    expect(stale.staleFrom('/q', 'old')).toBeUndefined(); // another project
    t = 3;
    stale.started('old'); // restarted (resumed)
    stale.started('new');
    expect(stale.staleFrom('/p', 'old')).toBeUndefined();
    expect(stale.staleFrom('/p', 'new')).toBeUndefined();
  });
});
