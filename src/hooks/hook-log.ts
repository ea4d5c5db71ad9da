// The hook log (`<store>/hooks.log`): one JSON line per hook call that failed, was rejected or had to
// warn. A hook never breaks the agent, so this is where the details go; people read it with any text
// tool. Bounded: past MAX_BYTES the oldest half is dropped (an atomic rewrite of the newest lines).
import type { Store } from '../index.js';

export const HOOK_LOG_KEY = 'hooks.log';
const MAX_BYTES = 1024 * 1024;

export interface HookLogEntry {
  agent: string;
  event?: string;
  tool?: string;
  session?: string;
  /** An error code of DESIGN §7 (`INVALID_ARGUMENT`, `PATH_ESCAPE`, `LOCKED`, `IO`, …) or `WARNING`. */
  code: string;
  reason?: string;
  message: string;
}

/** Appends one entry; throws when the store cannot be written (the caller falls back to stderr). */
export async function appendHookLog(store: Store, entry: HookLogEntry): Promise<void> {
  const { backend } = store.ctx;
  const line = Buffer.from(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`);
  await backend.withLock(HOOK_LOG_KEY, async () => {
    const st = await backend.stat(HOOK_LOG_KEY);
    if (st && st.size + line.length > MAX_BYTES) {
      const keep = await backend.readRange(HOOK_LOG_KEY, st.size - MAX_BYTES / 2, MAX_BYTES / 2);
      const cut = keep ? keep.indexOf(0x0a) + 1 : 0;
      await backend.write(HOOK_LOG_KEY, Buffer.concat([keep ? keep.subarray(cut) : Buffer.alloc(0), line]));
    } else {
      await backend.append(HOOK_LOG_KEY, line);
    }
  }, { timeoutMs: 2_000 });
}
