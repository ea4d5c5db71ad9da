// The key that signs MCP confirmation tokens (DESIGN §10 "MCP"), kept in the store as `mcp/confirm-key`
// (32 random bytes as hex, mode 0600, made on first use and kept). Keyed to the store rather than to
// the server process, a preview's token stays valid for the confirming call when a client starts a new
// server for every call (the MCP Inspector CLI does); it is still refused by a server of another store,
// and everything else the token binds (request, session position, plan, files) is checked as before.
import { storeSecret, type Workspace } from '../index.js';

export const CONFIRM_KEY = 'mcp/confirm-key';

type Backend = Workspace['ctx']['backend'];

/** The store's confirmation-token key, created under a lock when there is none yet. */
export async function storeConfirmKey(backend: Backend): Promise<Buffer> {
  const hex = await storeSecret(backend, CONFIRM_KEY, `the MCP confirmation key ${CONFIRM_KEY} in the store is malformed; delete it to make a new one (pending previews are then refused)`);
  return Buffer.from(hex, 'hex');
}
