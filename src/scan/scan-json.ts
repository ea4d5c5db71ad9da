// The public JSON of scan results (DESIGN §9: `ckpt scan --json` and the daemon's scan answer), and
// the way back (`scanResultOf`) for a scan answered by another process.
import { publicImage, type PublicImage } from '../format/public-image.js';
import type { ScanResult } from './scan-types.js';

/** A scan result as `ckpt scan --json` prints it and `POST /sessions/:id/scan` answers it. */
export interface PublicScanResult {
  tag: string | null;
  files: (PublicImage & { change: string })[];
  scanned: number;
  hashed: number;
  ms: number;
  watched?: number;
  baseline?: true;
  warning?: string;
  warnings?: string[];
  truncated?: true;
  pending?: string[];
  skipped?: ScanResult['skipped'];
  disabled?: true;
}

export function publicScanResult(r: ScanResult): PublicScanResult {
  return {
    tag: r.tag,
    files: r.files.map((f) => ({ ...publicImage(f), change: f.change })),
    scanned: r.scanned,
    hashed: r.hashed,
    ms: Math.round(r.ms),
    ...(r.watched !== undefined ? { watched: r.watched } : {}),
    ...(r.baseline ? { baseline: true as const } : {}),
    ...(r.warning ? { warning: r.warning } : {}),
    ...(r.warnings?.length ? { warnings: r.warnings } : {}),
    ...(r.truncated ? { truncated: true as const, pending: r.pending } : {}),
    ...(r.skipped.length ? { skipped: r.skipped } : {}),
    ...(r.disabled ? { disabled: true as const } : {}),
  };
}

/**
 * A ScanResult from its public JSON (a scan answered by the daemon, or by `ckpt scan --json` in a
 * child process): the counters that shape leaves out are 0, an absent `skipped` is empty.
 */
export function scanResultOf(json: Record<string, unknown>): ScanResult {
  return { skipped: [], dirs: 0, gitReferenced: 0, stored: 0, ...json } as unknown as ScanResult;
}
