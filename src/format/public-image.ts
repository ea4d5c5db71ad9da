// The public fields of a file image (DESIGN §9): what the CLI's `--json`, the daemon and the MCP tools
// show of a recorded path. No blob ids — content is read through the file routes — and only the
// fields that are set.
import type { FileImage } from './event.js';

export type PublicImage = Pick<FileImage, 'path' | 'state' | 'bytes' | 'mode' | 'target' | 'why'>;

export function publicImage(f: PublicImage): PublicImage {
  return {
    path: f.path,
    state: f.state,
    ...(f.bytes !== undefined ? { bytes: f.bytes } : {}),
    ...(f.mode !== undefined ? { mode: f.mode } : {}),
    ...(f.target !== undefined ? { target: f.target } : {}),
    ...(f.why !== undefined ? { why: f.why } : {}),
  };
}
