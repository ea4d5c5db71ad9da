// `du`-like size of a folder: allocated bytes (st_blocks × 512) of every file and folder beneath it,
// plus the apparent size (sum of file lengths) for reference. Symlinks are not followed.
import { promises as fsp } from 'node:fs';
import path from 'node:path';

export interface DiskUsage {
  allocated: number;
  apparent: number;
  files: number;
}

export async function diskUsage(dir: string): Promise<DiskUsage> {
  const total: DiskUsage = { allocated: 0, apparent: 0, files: 0 };
  const walk = async (d: string): Promise<void> => {
    const st = await fsp.lstat(d);
    total.allocated += st.blocks * 512;
    const entries = await fsp.readdir(d, { withFileTypes: true });
    const subdirs: string[] = [];
    await Promise.all(
      entries.map(async (e) => {
        const p = path.join(d, e.name);
        if (e.isDirectory()) return void subdirs.push(p);
        const s = await fsp.lstat(p);
        total.allocated += s.blocks * 512;
        total.apparent += s.size;
        total.files++;
      }),
    );
    for (const s of subdirs) await walk(s);
  };
  await walk(dir);
  return total;
}
