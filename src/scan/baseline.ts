// The scan baseline of a workspace (DESIGN §10 "Agent integration", the baseline trap): a scan can only
// record what changed against an earlier scan, so a workspace must have its baseline before an agent's
// first shell command. Sessions take it when they are created; hooks make sure of it before a shell
// tool runs. Checking is one stat of the workspace's scan index.
import type { SessionHandle } from '../session/session-handle.js';
import { scan } from './scan.js';
import { scanIndexKey } from './scan-persist.js';
import type { ScanOptions, ScanResult } from './scan-types.js';

/** Whether the workspace has a scan index (some scan, by any session, took the baseline). */
export async function hasBaseline(session: SessionHandle): Promise<boolean> {
  return (await session.ctx.backend.stat(scanIndexKey(session))) !== undefined;
}

/**
 * Takes the workspace's baseline unless it has one (checked again under the scan lock, so two
 * processes never both take it and neither records a capture). Returns the scan result when this
 * call took it, undefined when there was one already (or capture is disabled).
 */
export async function ensureBaseline(session: SessionHandle, options: Omit<ScanOptions, 'onlyBaseline'> = {}): Promise<ScanResult | undefined> {
  if (!session.ctx.options.captureEnabled || (await hasBaseline(session))) return undefined;
  const r = await scan(session, { ...options, onlyBaseline: true });
  return r.baseline ? r : undefined;
}
