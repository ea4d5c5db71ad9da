// The key that signs MCP confirmation tokens (DESIGN §10 "MCP"), kept in the store as `mcp/confirm-key`
// (32 random bytes as hex, mode 0600, made on first use and kept). Keyed to the store rather than to
// the server process, a preview's token stays valid for the confirming call when a client starts a new
// server for every call (the MCP Inspector CLI does); it is still refused by a server of another store,
// and everything else the token binds (request, session position, plan, files) is checked as before.
import { randomBytes } from 'node:crypto';
import { CkptError, type Workspace } from '../index.js';

export const CONFIRM_KEY = 'mcp/confirm-key';

type Backend = Workspace['ctx']['backend'];

/** The store's confirmation-token key, created under a lock when there is none yet. */
export async function storeConfirmKey(backend: Backend): Promise<Buffer> {
  const existing = await readKey(backend);
  if (existing) return existing;
  return backend.withLock(`${CONFIRM_KEY}.lock`, async () => {
    const again = await readKey(backend);
    if (again) return again;
    const key = randomBytes(32);
    await backend.write(CONFIRM_KEY, Buffer.from(`${key.toString('hex')}\n`), { mode: 0o600 });
    return key;
  });
}

async function readKey(backend: Backend): Promise<Buffer | undefined> {
  const text = (await backend.read(CONFIRM_KEY))?.toString('utf8').trim();
  if (text === undefined || text === '') return undefined;
  if (!/^[0-9a-f]{64}$/.test(text)) {
    throw new CkptError('LOG_CORRUPT', `the MCP confirmation key ${CONFIRM_KEY} in the store is malformed; delete it to make a new one (pending previews are then refused)`, { key: CONFIRM_KEY });
  }
  return Buffer.from(text, 'hex');
}
