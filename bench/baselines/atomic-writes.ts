// Floor for a restore: atomic, durable replacement of many files — per file a temp file beside the
// target, write, fsync, rename over the target — then one fsync of every touched folder. Sequential.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { timed } from '../measure.js';

export interface FileWrite {
  file: string;
  data: Uint8Array;
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Milliseconds to atomically and durably write every file (their folders must exist). */
export function atomicWrites(writes: FileWrite[]): Promise<number> {
  return timed(async () => {
    const dirs = new Set<string>();
    for (const w of writes) {
      const tmp = `${w.file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      const fh = await fsp.open(tmp, 'w');
      try {
        await fh.write(w.data);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmp, w.file);
      dirs.add(path.dirname(w.file));
    }
    for (const d of dirs) await fsyncDir(d);
  });
}
