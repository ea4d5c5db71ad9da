// A child process writing its share of the benchmark tree (files i with i % of === part), so
// generation uses every core. Started by tree.ts with the parent's Node flags (tsx's loader).
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { sourceText } from './source-text.js';

export interface GenJob {
  root: string;
  seed: number;
  part: number;
  of: number;
  /** [relPath, size] of every file of the tree, indexed by file number. */
  files: [string, number][];
}

async function work(job: GenJob): Promise<void> {
  let next = job.part;
  let bytes = 0;
  let done = 0;
  const one = async (): Promise<void> => {
    while (next < job.files.length) {
      const i = next;
      next += job.of;
      const [rel, size] = job.files[i] as [string, number];
      const data = sourceText(job.seed, i, size);
      bytes += data.length;
      await fsp.writeFile(path.join(job.root, rel), data);
      if (++done % 2500 === 0) process.send?.({ done: 2500 });
    }
  };
  await Promise.all(Array.from({ length: 8 }, one));
  process.send?.({ done: done % 2500, bytes, finished: true });
}

process.once('message', (job: GenJob) => {
  work(job).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
});
