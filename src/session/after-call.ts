// Work that follows an operation's answer (DESIGN §10 "Inline before-images"): the blob-store copy of
// an inline capture is not part of what the caller waits for — the capture is durable in its log
// already. A queue runs such work one item at a time, each on a later event-loop turn (setImmediate
// runs after the current call chain, e.g. after an HTTP answer is written), and can be drained.
// Every store has one (`StoreContext.afterCall`, drained by `store.close()`); `ckpt serve` runs its own
// behind its answers (`CkptOptions.defer`).
import type { AfterCallQueue } from '../context.js';

export function createAfterCallQueue(onError: (err: unknown) => void): AfterCallQueue {
  let tail: Promise<void> = Promise.resolve();
  return {
    add(work) {
      tail = tail
        .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
        .then(work)
        .catch(onError);
    },
    drain: () => tail,
  };
}
