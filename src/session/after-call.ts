// Work that follows an operation's answer (DESIGN §10 "Inline before-images"): the blob-store copy of
// an inline capture is not part of what the caller waits for — the capture is durable in its log
// already. A queue runs such work one item at a time, each once `wait` allows it (by default on a
// later event-loop turn: setImmediate runs after the current call chain, e.g. after an HTTP answer is
// written), and can be drained (drain runs what is queued without waiting).
// Every store has one (`StoreContext.afterCall`, drained by `store.close()`; its items wait for a
// quiet moment: `createLibraryQueue`); `ckpt serve` runs its own behind its answers
// (`CkptOptions.defer`) and a second one whose items wait until no hook is being answered
// (`CkptOptions.deferIdle`, session/quiet-gate.ts).
import type { AfterCallQueue, StoreContext } from '../context.js';
import { createQuietGate } from './quiet-gate.js';

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
 * Calls of the library in one process come in bursts: a capture, the tool, its settle, the next
 * capture a few milliseconds later (an MCP conversation, a script). A capture's queued copy is three
 * fsyncs; run on the next event-loop turn, they were still in the disk's journal when the next
 * capture's log fsync came, and that fsync waited for them (issue 31: `capture-one` in the bench's
 * loop, 1.47 against 1.25 ms median paired). So the store's own queue runs an item once nothing was
 * queued for LIBRARY_QUIET_MS (a model thinking, a script done), at most LIBRARY_MAX_WAIT_MS after it
 * was queued (a loop that never pauses: bounded memory), or when drained. Its waits keep no process
 * alive: a process about to end ('beforeExit': a CLI command, a hook recording in-process, a script
 * that never closes its store) drains it then, at once — as the next turn ran it before.
 */
const LIBRARY_QUIET_MS = 50;
const LIBRARY_MAX_WAIT_MS = 1_000;

/** Library queues holding work, drained when the process would otherwise end. */
const holding = new Set<AfterCallQueue>();
let drainsBeforeExit = false;

export function createLibraryQueue(onError: (err: unknown) => void, limits = { quietMs: LIBRARY_QUIET_MS, maxWaitMs: LIBRARY_MAX_WAIT_MS }): AfterCallQueue {
  const gate = createQuietGate({ ...limits, unref: true });
  const queue = createAfterCallQueue(onError, gate.wait);
  let pending = 0;
  const self: AfterCallQueue = {
    add(work) {
      // Queuing is the activity: the burst the work follows is still going on.
      gate.busy();
      gate.done();
      pending++;
      holding.add(self);
      if (!drainsBeforeExit) {
        drainsBeforeExit = true;
        process.on('beforeExit', () => {
          for (const q of holding) void q.drain();
        });
      }
      queue.add(async () => {
        try {
          await work();
        } finally {
          if (--pending === 0) holding.delete(self);
        }
      });
    },
    drain() {
      const drained = queue.drain(); // marks the queue as draining (hurry) before the wake
      gate.wake();
      return drained;
    },
  };
  return self;
}

/**
 * Queues work nothing another process waits for: a daemon's idle queue (CkptOptions.deferIdle), else
 * its answer queue (defer), else the store's own (StoreContext.afterCall).
 */
export function afterAnswerIdle(ctx: Pick<StoreContext, 'options' | 'afterCall'>, work: () => Promise<void>): void {
  const { deferIdle, defer } = ctx.options;
  (deferIdle ?? defer ?? ctx.afterCall.add)(work);
}
