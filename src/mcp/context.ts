// What every MCP tool and resource works on: the one workspace the server was started for
// (`--workspace`, default the current folder), the default session, the confirmation signer and
// whether a person must approve destructive calls.
// Sessions are looked up in this workspace only, so another workspace's sessions (and so its
// blobs) cannot be named through this server.
import { CkptError, isCkptError, type Session, type Workspace } from '../index.js';
import type { Confirmer } from './confirm-token.js';

export interface McpContext {
  workspace: Workspace;
  confirmer: Confirmer;
  /**
   * The "person must confirm" setting (`ckpt mcp --require-person`): destructive tools run only when a
   * person approved them through the client (elicitation accepted), never on the token alone.
   */
  requirePerson: boolean;
  /** The server's default session (`ckpt mcp --session`), if it was given one. */
  defaultSession?: string;
  /** The session named by `id`, else the server's default (--session), else the newest of the workspace. */
  session(id?: string): Promise<Session>;
}

export function createMcpContext(options: { workspace: Workspace; confirmer: Confirmer; defaultSession?: string; requirePerson?: boolean }): McpContext {
  const { workspace } = options;
  return {
    workspace,
    confirmer: options.confirmer,
    requirePerson: Boolean(options.requirePerson),
    defaultSession: options.defaultSession,
    session: async (id) => {
      const chosen = id ?? options.defaultSession;
      if (chosen) return workspace.get(chosen);
      try {
        return await workspace.latest();
      } catch (err) {
        if (!isCkptError(err, 'SESSION_NOT_FOUND')) throw err;
        throw new CkptError('SESSION_NOT_FOUND', `no session in workspace ${workspace.root} yet: start one with the session_new tool`, err.data);
      }
    },
  };
}
