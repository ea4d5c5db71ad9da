// The `ckpt` command line: the global program (program.ts) with every command of the table. An exact
// `ckpt … scan …` call runs scan-main.ts instead, which loads only the scan command (bin/ckpt.js).
import type { Command } from 'commander';
import type { CliIo } from './io.js';
import { createProgram, inherit, processIo, runProgram, type CommanderText } from './program.js';
import { registerSessionCommands } from './commands/session.js';
import { registerCheckpointCommands } from './commands/checkpoint.js';
import { registerRestoreCommands } from './commands/restore.js';
import { registerMaintenanceCommands } from './commands/maintenance.js';
import { statusCommand } from './commands/status.js';
import { demoCommand } from './commands/demo.js';
import { registerConversationCommands } from './commands/conversation.js';
import { registerInspectCommands } from './commands/inspect.js';
import { hookCommand } from './commands/hook.js';
import { initCommand } from './commands/init.js';
import { serveCommand } from './commands/serve.js';
import { openCommand } from './commands/open.js';
import { mcpCommand } from './commands/mcp.js';
import { registerStoreCommands } from './commands/store.js';
import { exportCommand } from './commands/export.js';
import { addCommands } from './command-table.js';

export { TAG_HELP } from './program.js';

export function buildProgram(io: CliIo, captured: CommanderText = { out: '', err: '' }): Command {
  const program = createProgram(io, captured);
  // The order here is the order of `ckpt --help`: groups register themselves, single commands are specs.
  registerSessionCommands(program);
  registerCheckpointCommands(program);
  addCommands(program, [statusCommand]);
  registerRestoreCommands(program);
  registerConversationCommands(program);
  registerInspectCommands(program);
  addCommands(program, [exportCommand]);
  registerMaintenanceCommands(program);
  registerStoreCommands(program);
  addCommands(program, [demoCommand, hookCommand, initCommand, serveCommand, openCommand, mcpCommand]);
  for (const cmd of program.commands) inherit(cmd, program);
  return program;
}

/** Runs the CLI and returns the process exit code. */
export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runProgram(argv, io, buildProgram);
}
