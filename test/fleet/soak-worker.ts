// One agent process of the fleet soak (issue 33): on its machine (CKPT_MACHINE_ID) it opens the store,
// its own session in its machine's workspace, prints `ready`, waits for `go` on stdin, then until its
// deadline records what an agent does: a turn (its text carries the wall-clock time of the append, so
// the test can measure append -> SSE event on another machine's daemon) and a capture / edit / settle
// of one of its own files (capture-one latency is timed here). Prints one JSON summary line at the end.
// Run: node --import tsx soak-worker.ts JSON.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isCkptError, openStore } from '../../src/index.js';

export interface FleetWorkerArgs {
  store: string;
  folder: string;
  session: string;
  seconds: number;
}

export interface FleetWorkerSummary {
  session: string;
  turns: number;
  captures: number;
  /** Capture-one durations, ms. */
  captureMs: number[];
  /** Wall-clock time each turn's append returned, by turn number. */
  turnDone: Record<number, number>;
  errors: Record<string, number>;
  unexpected: string[];
}

const now = (): number => performance.timeOrigin + performance.now();

async function main(args: FleetWorkerArgs): Promise<FleetWorkerSummary> {
  const summary: FleetWorkerSummary = { session: args.session, turns: 0, captures: 0, captureMs: [], turnDone: {}, errors: {}, unexpected: [] };
  const store = await openStore({ dir: args.store });
  const ws = await store.openWorkspace(args.folder);
  const s = await ws.create({ id: args.session, title: `fleet soak ${args.session}` });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
  const deadline = Date.now() + args.seconds * 1000;
  let i = 0;
  while (Date.now() < deadline) {
    i++;
    try {
      await s.turn({ text: `fleet ${args.session} ${i} at=${now().toFixed(3)}` });
      summary.turnDone[i] = now();
      summary.turns++;
      const rel = `${args.session}-${i % 4}.txt`;
      const t0 = performance.now();
      await s.capture([rel], { tool: 'Edit' });
      summary.captureMs.push(performance.now() - t0);
      await writeFile(join(ws.root, rel), `${args.session} edit ${i}\n`.repeat(1 + (i % 7)));
      await s.settle([rel]);
      summary.captures++;
    } catch (err) {
      const code = isCkptError(err) ? err.code : 'UNCAUGHT';
      summary.errors[code] = (summary.errors[code] ?? 0) + 1;
      // Sessions of one workspace share its lock: LOCKED is a legitimate outcome under load.
      if (code !== 'LOCKED' && summary.unexpected.length < 5) summary.unexpected.push(`${code}: ${(err as Error).message}`);
    }
  }
  await store.close();
  return summary;
}

main(JSON.parse(process.argv[2]!) as FleetWorkerArgs).then(
  (s) => {
    process.stdout.write(`${JSON.stringify(s)}\n`);
    process.exit(0);
  },
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
