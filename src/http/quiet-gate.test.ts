import { describe, expect, it } from 'vitest';
import { createAfterCallQueue } from '../session/after-call.js';
import { createQuietGate } from './quiet-gate.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('quiet gate (work behind a daemon answers)', () => {
  it('runs queued work only once no request has been in flight for the quiet period, in order', async () => {
    const gate = createQuietGate({ quietMs: 60, maxWaitMs: 5_000 });
    const queue = createAfterCallQueue(() => {}, gate.wait);
    const ran: string[] = [];
    gate.busy();
    queue.add(async () => void ran.push('a'));
    queue.add(async () => void ran.push('b'));
    await sleep(100);
    expect(ran).toEqual([]); // a request is in flight
    gate.done();
    gate.busy(); // the next request of the burst
    gate.done();
    await sleep(30);
    expect(ran).toEqual([]); // quiet for less than the period
    await sleep(80);
    expect(ran).toEqual(['a', 'b']);
  });

  it('runs work that waited the longest allowed even when requests never pause', async () => {
    const gate = createQuietGate({ quietMs: 1_000, maxWaitMs: 80 });
    const queue = createAfterCallQueue(() => {}, gate.wait);
    let ran = false;
    gate.busy();
    queue.add(async () => void (ran = true));
    await sleep(40);
    expect(ran).toBe(false);
    await sleep(100);
    expect(ran).toBe(true);
    gate.done();
  });

  it('drain runs what is queued without waiting, and a failure goes to onError without stopping the queue', async () => {
    const gate = createQuietGate({ quietMs: 150, maxWaitMs: 60_000 });
    const errors: unknown[] = [];
    const queue = createAfterCallQueue((e) => errors.push(e), gate.wait);
    const ran: number[] = [];
    gate.busy();
    queue.add(async () => {
      throw new Error('boom');
    });
    queue.add(async () => void ran.push(2));
    await sleep(20); // the first is waiting (requests are in flight: it would wait for a minute)
    const t0 = Date.now();
    await queue.drain();
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(ran).toEqual([2]);
    expect(errors).toHaveLength(1);
  });

  it('a drain wakes an item waiting out the quiet period: it runs at once (a daemon stopping)', async () => {
    const gate = createQuietGate({ quietMs: 300, maxWaitMs: 60_000 });
    const queue = createAfterCallQueue(() => {}, gate.wait);
    let ran = false;
    queue.add(async () => void (ran = true));
    await sleep(20); // it sleeps now
    const t0 = Date.now();
    const drained = queue.drain();
    gate.wake();
    await drained;
    expect(ran).toBe(true);
    expect(Date.now() - t0).toBeLessThan(200);
  });
});
