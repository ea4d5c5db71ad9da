// Floor for a durable capture: one write + fsync of the same bytes into a new file.
import { promises as fsp } from 'node:fs';
import { timed } from '../measure.js';

/** Milliseconds to create `file`, write `data` and fsync it. */
export function writeFsync(file: string, data: Uint8Array): Promise<number> {
  return timed(async () => {
    const fh = await fsp.open(file, 'w');
    try {
      await fh.write(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
  });
}
