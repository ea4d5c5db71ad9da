// Work that follows an answer (CkptOptions.defer): the blob-store copy of an inline capture is not
// part of what a hook waits for — the capture is durable in its log already — so the daemon runs it
// after the response is written (setImmediate runs after the answer's write), one at a time, and
// drains the queue before it stops.
export interface AfterAnswerQueue {
  add(work: () => Promise<void>): void;
  /** Resolves once everything added so far has run. */
  drain(): Promise<void>;
}

export function createAfterAnswerQueue(onError: (err: unknown) => void): AfterAnswerQueue {
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
