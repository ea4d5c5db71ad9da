// Settle (DESIGN §2): after a tool has written, record the after-state of its paths (content too, so
// diffs show what the agent wrote). Settles tell ckpt what the workspace should hold now: drift is
// measured against them, and the workspace's owner index learns who wrote each path.
import { CkptError } from '../errors.js';
import type { FileImage } from '../format/event.js';
import { parseTag } from '../format/tag.js';
import type { SessionHandle } from '../session/session-handle.js';
import { replay } from '../session/replay.js';
import { readImages, resolveInputs } from './capture.js';
import { afterCommit, withWarnings } from '../session/warnings.js';
import { recordOwnership } from './owner-index.js';

export interface SettleResult {
  tag: string | null;
  files: FileImage[];
  disabled?: true;
  /** Cache writes that failed after the settle was recorded. */
  warnings?: string[];
}

export async function settle(session: SessionHandle, inputs: readonly string[], options: { tag?: string; cwd?: string } = {}): Promise<SettleResult> {
  if (options.tag !== undefined) parseTag(options.tag);
  const paths = await resolveInputs(session, inputs, options.cwd);
  if (!session.ctx.options.captureEnabled) return { tag: null, files: [], disabled: true };
  const images = await readImages(session, paths);
  const warnings: string[] = [];
  const tag = await session.transaction(async (tx) => {
    const state = replay(await tx.read());
    const tag = options.tag ?? state.captures.at(-1)?.tag;
    if (options.tag !== undefined && !state.captures.some((c) => c.tag === options.tag)) {
      throw new CkptError('TAG_NOT_FOUND', `no capture with tag ${options.tag} to settle`, { tag: options.tag });
    }
    await tx.append([{ type: 'settle', tag: tag ?? null, files: images }]);
    return tag ?? null;
  }, { warnings });
  await afterCommit(warnings, 'owner index not updated', () => recordOwnership(session, images));
  return withWarnings({ tag, files: images }, warnings);
}
