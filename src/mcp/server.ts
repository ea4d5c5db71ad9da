// `ckpt mcp` (DESIGN §9): an MCP server over one workspace, built on the official SDK. A thin adapter
// over the public API: sessions, history, checkpoints and two-step restores as tools, the log and
// files at tags as resources. It never imports CLI code; the CLI only starts it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Workspace } from '../index.js';
import { storeConfirmKey } from './confirm-key.js';
import { createConfirmer, type Confirmer } from './confirm-token.js';
import { createMcpContext } from './context.js';
import { registerResources } from './resources.js';
import { registerCheckpointTools } from './tools-checkpoint.js';
import { registerHistoryTools } from './tools-history.js';
import { registerRestoreTools } from './tools-restore.js';
import { registerSessionTools } from './tools-sessions.js';
import { CkptStdioTransport } from './stdio-transport.js';
import { registerStatusTool } from './tools-status.js';

export interface CkptMcpServerOptions {
  workspace: Workspace;
  /** Session the tools use when a call names none (default: the newest of the workspace). */
  defaultSession?: string;
  /** Signs confirmation tokens (default: a fresh random key for this server; `runMcpStdio`: the store's key). */
  confirmer?: Confirmer;
  /** Destructive tools need a person's approval through the client (elicitation); the token alone is not enough. */
  requirePerson?: boolean;
  version?: string;
}

/** Largest number of array elements + object members one tool call's arguments may hold. */
const MAX_INPUT_ELEMENTS = 5_000;

const INSTRUCTIONS = `ckpt records what you change in this workspace so any earlier point can be diffed and restored.
Call session_new once per conversation, turn when the user sends a message, checkpoint with the paths
BEFORE every write/edit/delete (and checkpoint without paths after shell commands), settle after writing.
Restores are two-step: restore_preview returns a plan and a token; show the plan to the user and call
restore / undo / rewind with the token only after they confirm.
When ckpt's hooks already record this agent (\`ckpt init\`: its session id starts with the agent's name,
e.g. claude-…), do not call session_new, turn, checkpoint or settle: the hooks record every prompt and
tool call (turn is refused in such a session). Use the read tools and the two-step restores.`;

const REQUIRE_PERSON_NOTE = `
This server requires a person's approval for restore / undo / rewind: the client asks its user (MCP
elicitation) before anything changes; without that approval the call is refused.`;

export function createCkptMcpServer(options: CkptMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: 'ckpt', title: 'ckpt: checkpoints and undo for agent edits', version: options.version ?? '0.1.0' },
    { instructions: options.requirePerson ? INSTRUCTIONS + REQUIRE_PERSON_NOTE : INSTRUCTIONS, maxToolInputElements: MAX_INPUT_ELEMENTS },
  );
  const ctx = createMcpContext({
    workspace: options.workspace,
    confirmer: options.confirmer ?? createConfirmer(),
    defaultSession: options.defaultSession,
    requirePerson: options.requirePerson,
  });
  registerSessionTools(server, ctx);
  registerCheckpointTools(server, ctx);
  registerHistoryTools(server, ctx);
  registerStatusTool(server, ctx);
  registerRestoreTools(server, ctx);
  registerResources(server, ctx);
  return server;
}

/** Serves MCP on stdin/stdout until the client closes the stream. Nothing else may write to stdout. */
export async function runMcpStdio(options: CkptMcpServerOptions): Promise<void> {
  // One key per store: a client that starts a server per call (the MCP Inspector CLI) can preview in one and confirm in the next.
  const confirmer = options.confirmer ?? createConfirmer({ key: await storeConfirmKey(options.workspace.ctx.backend) });
  const server = createCkptMcpServer({ ...options, confirmer });
  // Not the SDK's StdioServerTransport: one message over its 10 MiB buffer closed it (and so the server).
  const transport = new CkptStdioTransport();
  await server.connect(transport);
  // Lines that are not JSON-RPC have no id to answer; say why on stderr (clients show it in their logs).
  server.server.onerror = (err) => void process.stderr.write(`ckpt mcp: ${err.message.split('\n')[0]}\n`);
  await new Promise<void>((resolve) => {
    server.server.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await server.close();
}
