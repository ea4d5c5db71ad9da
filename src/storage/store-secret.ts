// A secret the store keeps (the daemon's token, the hook key, the MCP confirmation key): 32 random
// bytes as hex in a file of mode 0600, made under a lock by whichever process asks first and kept
// across restarts. A malformed file is LOG_CORRUPT, never silently replaced: what was made from the
// secret (installed hooks, credentials, pending previews) would stop working without a word.
import { randomBytes } from 'node:crypto';
import { CkptError } from '../errors.js';
import type { StoreBackend } from './backend.js';

/** The secret at `key` (64 hex digits), created when there is none yet; `malformed` is the error's message. */
export async function storeSecret(backend: StoreBackend, key: string, malformed: string): Promise<string> {
  const existing = await readSecret(backend, key, malformed);
  if (existing) return existing;
  return backend.withLock(`${key}.lock`, async () => {
    const again = await readSecret(backend, key, malformed);
    if (again) return again;
    const secret = randomBytes(32).toString('hex');
    await backend.write(key, Buffer.from(`${secret}\n`), { mode: 0o600 });
    return secret;
  });
}

async function readSecret(backend: StoreBackend, key: string, malformed: string): Promise<string | undefined> {
  const text = (await backend.read(key))?.toString('utf8').trim();
  if (text === undefined || text === '') return undefined;
  if (!/^[0-9a-f]{64}$/.test(text)) throw new CkptError('LOG_CORRUPT', malformed, { key });
  return text;
}
