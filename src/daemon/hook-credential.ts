// The hook-only capability credential (DESIGN §10 "Hooks at no cost"): what `ckpt init` writes into an
// agent's local settings so that its HTTP hooks can reach the daemon without the daemon's token and
// without an environment variable. A credential names one workspace: it lets `POST /hooks/<agent>`
// record into that workspace and nothing else (no reads, no restores, no other workspace). It is
// `ckh1.<base64url HMAC-SHA256(hook key, "ckpt-hook\0" + workspace)>`, keyed by `daemon/hook-key`
// (32 random bytes, hex, mode 0600, made once and kept — apart from the daemon's token, so showing
// or rotating one leaves the other alone). Deleting the key file revokes every credential at once.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { StoreContext } from '../context.js';
import { storeSecret } from '../storage/store-secret.js';

export const HOOK_KEY_KEY = 'daemon/hook-key';
const PREFIX = 'ckh1.';

/** The store's hook key, created when there is none yet. */
export function hookKey(ctx: StoreContext): Promise<string> {
  return storeSecret(ctx.backend, HOOK_KEY_KEY, `the hook key file ${HOOK_KEY_KEY} is malformed; delete it to make a new one (then run \`ckpt init\` again)`);
}

/** The credential that records into `workspace` (an absolute, resolved path) and nothing else. */
export function hookCredential(key: string, workspace: string): string {
  return PREFIX + createHmac('sha256', key).update(`ckpt-hook\0${workspace}`).digest('base64url');
}

/** True when the text looks like a hook credential (so a caller can tell it from the daemon's token). */
export function isHookCredential(text: string): boolean {
  return text.startsWith(PREFIX);
}

/** Whether `given` is the credential of `workspace` under `key` (constant time). */
export function checkHookCredential(key: string, workspace: string, given: string): boolean {
  const want = Buffer.from(hookCredential(key, workspace));
  const got = Buffer.from(given);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** True when `text` (a settings file's) carries a hook credential: such a file must be its owner's alone. */
export function mentionsHookCredential(text: string): boolean {
  return text.includes(PREFIX);
}
