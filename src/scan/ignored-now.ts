// Known paths whose names the rules began to ignore while they are still there (DESIGN §10 "Previews,
// hostile caches and probes (2026-12-05, third session)"): a scan leaves an ignored path alone, but
// one ckpt recorded that changed in the step that ignored its name (`echo .env >> .gitignore && echo
// KEY=new > .env`, a real agent's move) held what ckpt recorded at the prompts before: its change is
// recorded (before: that record), and from then on it is not tracked (after: not recorded, ignored),
// so a restore to before it puts the record back, and a later one leaves it.
import { join } from 'node:path';
import { readImage } from '../workspace/read-image.js';
import { gitBlobId } from '../workspace/git-repo.js';
import { compare, type Known } from './known.js';
import type { Change } from './scan-compare.js';

export async function changedWhileIgnored(root: string, known: readonly Known[], maxBytes: number): Promise<Change[]> {
  const changes: Change[] = [];
  for (const k of known) {
    const path = k.image.path;
    let sha1: string | undefined;
    const now = await readImage(join(root, path), path, { maxBytes, onContent: (data) => void (k.gitOid !== undefined && (sha1 = gitBlobId(data))) });
    // Gone since the walk: the next scan sees it as any deleted path.
    if (now.state === 'absent') continue;
    const change = compare(k, { image: now }, sha1);
    if (change) changes.push({ before: k, after: { path, state: 'skipped', why: 'ignored' }, change });
  }
  return changes;
}
