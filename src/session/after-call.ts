// Work that follows an operation's answer (DESIGN §10 "Inline before-images"): the blob-store copy of
// an inline capture is not part of what the caller waits for — the capture is durable in its log
// already. A queue runs such work one item at a time, each once `wait` allows it (by default on a
// later event-loop turn: setImmediate runs after the current call chain, e.g. after an HTTP answer is
// written), and can be drained (drain runs what is queued without waiting).
// Every store has one (`StoreContext.afterCall`, drained by `store.close()`); `ckpt serve` runs its own
// behind its answers (`CkptOptions.defer`) and a second one whose items wait until no hook is being
// answered (`CkptOptions.deferIdle`, http/quiet-gate.ts).
import type { AfterCallQueue, StoreContext } from '../context.js';

const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** `wait(since, hurry)`: resolves when work queued at `since` may run; `hurry()` is true while draining. */
export function createAfterCallQueue(onError: (err: unknown) => void, wait: (since: number, hurry: () => boolean) => Promise<void> = nextTurn): AfterCallQueue {
  let tail: Promise<void> = Promise.resolve();
  let draining = 0;
  const hurry = (): boolean => draining > 0;
  return {
    add(work) {
      const since = Date.now();
      tail = tail
        .then(() => wait(since, hurry))
        .then(work)
        .catch(onError);
    },
    async drain() {
      draining++;
      try {
        await tail;
      } finally {
        draining--;
      }
    },
  };
}

/**
 * Queues work nothing another process waits for: a daemon's idle queue (CkptOptions.deferIdle), else
 * its answer queue (defer), else the store's own (StoreContext.afterCall).
 */
export function afterAnswerIdle(ctx: Pick<StoreContext, 'options' | 'afterCall'>, work: () => Promise<void>): void {
  const { deferIdle, defer } = ctx.options;
  (deferIdle ?? defer ?? ctx.afterCall.add)(work);
}
