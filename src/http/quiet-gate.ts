// When a daemon copies a tool capture's inline content to the blob store (CkptOptions.deferIdle, DESIGN
// §10 "Hooks at no cost"): those copies are fsyncs on this process's event loop, and an agent's tool
// call is a burst of hook requests (PreToolUse, the tool, PostToolUse, the next model call) a few
// milliseconds apart. Work run inside the burst delays the next answer and competes with the agent
// for the disk and the CPU; so queued work waits until no request has been in flight for QUIET_MS (a
// model thinking, a long tool), or at most MAX_WAIT_MS after it was queued (a fleet that never
// pauses), or until the queue is drained. QUIET_MS is above the gaps within a fast model's burst:
// under the scripted model, Write's PostToolUse to Edit's PreToolUse (a Read and two model answers
// between) took 120–170 ms, and a 120 ms threshold ran the work there. Nothing waits for durability:
// what is queued is durable in the session log already, and no other process reads the copy first.
const QUIET_MS = 500;
const MAX_WAIT_MS = 10_000;

export interface QuietGate {
  /** A request arrived / its response ended. */
  busy(): void;
  done(): void;
  /** The queue's wait (session/after-call.ts): resolves once work queued at `since` may run. */
  wait(since: number, hurry: () => boolean): Promise<void>;
  /** Ends a wait's sleep now, so that a drain (`hurry`) does not wait out the quiet period. */
  wake(): void;
}

export function createQuietGate(limits: { quietMs?: number; maxWaitMs?: number } = {}): QuietGate {
  const quietMs = limits.quietMs ?? QUIET_MS;
  const maxWaitMs = limits.maxWaitMs ?? MAX_WAIT_MS;
  let inFlight = 0;
  let lastDone = 0;
  let sleeping: (() => void) | undefined;
  return {
    busy: () => void inFlight++,
    done() {
      inFlight--;
      lastDone = Date.now();
    },
    async wait(since, hurry) {
      for (;;) {
        const now = Date.now();
        if (hurry() || now - since >= maxWaitMs) return;
        const quietFor = inFlight > 0 ? 0 : now - lastDone;
        if (quietFor >= quietMs) return;
        // Polls only while work is queued: at most once per quiet period.
        // One queue waits on a gate, one item at a time: one sleeper to wake.
        await new Promise<void>((resolve) => {
          const end = (): void => {
            clearTimeout(timer);
            sleeping = undefined;
            resolve();
          };
          const timer = setTimeout(end, Math.min(quietMs - quietFor, since + maxWaitMs - now));
          sleeping = end;
        });
      }
    },
    wake: () => sleeping?.(),
  };
}
