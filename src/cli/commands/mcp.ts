// `ckpt mcp` (DESIGN §9): serves the workspace (--workspace, default the current folder) over MCP on
// stdio until the client disconnects; `--config` prints the client configuration for it instead.
// The server itself lives in src/mcp/.
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { CkptError, defaultStoreDir } from '../../index.js';
import { mcpClientConfig } from '../../mcp/client-config.js';
import type { CommandSpec } from '../command-table.js';
import { tuneForResidentProcess } from '../resident-process.js';

export const mcpCommand: CommandSpec = {
  use: 'mcp',
  description: 'serve this workspace to MCP clients (Claude Code, Cursor, …) on stdin/stdout',
  options: [
    ['--config', "print the client configuration that starts this ckpt's MCP server, and exit"],
    [
      '--require-person',
      'restore, undo and rewind run only when a person approved them in the client (MCP elicitation), never on the preview token alone (also CKPT_MCP_REQUIRE_PERSON=1)',
    ],
  ],
  run: async ([opts], ctx) => {
    const { config, requirePerson: flag } = opts as { config?: boolean; requirePerson?: boolean };
    const requirePerson = Boolean(flag) || isTruthy(process.env.CKPT_MCP_REQUIRE_PERSON);
    if (config) {
      const config = mcpClientConfig({
        node: process.execPath,
        script: process.argv[1] ? realpathSync(process.argv[1]) : undefined,
        // Resolved without opening anything: printing a configuration creates no store or workspace.
        workspace: ctx.flags.workspace ? existingFolder(resolve(ctx.io.cwd, ctx.flags.workspace)) : undefined,
        // A store from the environment is written in too (as `init` does): an MCP client started from
        // a desktop app has none of this shell's variables, and would record into the default store.
        store: ctx.flags.store ? resolve(ctx.io.cwd, ctx.flags.store) : ctx.io.env.CKPT_STORE || ctx.io.env.CKPT_HOME ? defaultStoreDir(ctx.io.env) : undefined,
        requirePerson,
      });
      ctx.io.stdout.write(`${JSON.stringify(config, null, 2)}\n`);
      return;
    }
    tuneForResidentProcess();
    // Loaded here, not with the CLI: the MCP SDK (and its JSON schema validator) is most of what
    // every other command would otherwise compile at start-up.
    const { runMcpStdio } = await import('../../mcp/server.js');
    await runMcpStdio({ workspace: await ctx.workspace(), defaultSession: ctx.flags.session, requirePerson });
  },
};

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value); // as store.ts reads CKPT_* switches
}

function existingFolder(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    throw new CkptError('INVALID_ARGUMENT', `workspace folder ${path} does not exist`, { workspace: path });
  }
}
