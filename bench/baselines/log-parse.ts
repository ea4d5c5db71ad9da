// Floor for opening a session: read its whole event log and JSON.parse every line.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { timed } from '../measure.js';

/** The `events.jsonl` of session `id` somewhere under the store, if the library wrote one. */
export async function findEventLog(storeDir: string, id: string): Promise<string | undefined> {
  const walk = async (d: string, depth: number): Promise<string | undefined> => {
    if (depth > 6) return undefined;
    let entries;
    try {
      entries = await fsp.readdir(d, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isFile() && e.name.endsWith('.jsonl') && p.includes(id)) return p;
      if (e.isDirectory() && e.name !== 'blobs' && e.name !== 'packs') {
        const found = await walk(p, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  return walk(storeDir, 0);
}

/** Milliseconds to read `file` and parse each of its lines; also returns the line count. */
export async function readAndParse(file: string): Promise<{ ms: number; lines: number }> {
  let lines = 0;
  const ms = await timed(async () => {
    const text = await fsp.readFile(file, 'utf8');
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      JSON.parse(text.slice(start, nl));
      lines++;
      start = nl + 1;
    }
  });
  return { ms, lines };
}
