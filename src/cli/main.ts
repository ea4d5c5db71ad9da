// The `ckpt` command line: global flags, the command table, and the only top-level catch, which maps
// every failure to its exit code (DESIGN §7) and, with --json, to a JSON error on stderr.
import { Command, CommanderError } from 'commander';
import { CkptError, exitCodeOf } from '../index.js';
import { createOutput, type CliIo } from './io.js';
import { registerSessionCommands } from './commands/session.js';
import { registerCheckpointCommands } from './commands/checkpoint.js';
import { registerRestoreCommands } from './commands/restore.js';
import { registerMaintenanceCommands } from './commands/maintenance.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerConversationCommands } from './commands/conversation.js';
import { registerInspectCommands } from './commands/inspect.js';

export function buildProgram(io: CliIo): Command {
  const program = new Command('ckpt')
    .description('Safe, fast undo for everything an AI coding agent does to a workspace.')
    .version(VERSION, '-V, --version')
    .option('--store <dir>', 'store folder (default: $CKPT_HOME, $XDG_DATA_HOME/ckpt or ~/.local/share/ckpt)')
    .option('--workspace <dir>', 'workspace root (default: the current folder)')
    .option('--session <id>', 'session id (default: the most recently updated session of the workspace)')
    .option('--json', 'print one JSON document on stdout (errors as JSON on stderr)')
    .option('--max-file-size <size>', 'largest file content captured, e.g. 16M (default: $CKPT_MAX_FILE_SIZE or 16M); larger files are recorded as skipped')
    .option('--refuse-oversize', 'a capture naming a file over the size cap fails (BLOB_TOO_LARGE) and records nothing ($CKPT_REFUSE_OVERSIZE=1)')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: () => {}, // reported by main() with the error code
    });
  (program as Command & { ckptIo: CliIo }).ckptIo = io;
  registerSessionCommands(program);
  registerCheckpointCommands(program);
  registerRestoreCommands(program);
  registerConversationCommands(program);
  registerInspectCommands(program);
  registerMaintenanceCommands(program);
  registerDemoCommand(program);
  for (const cmd of program.commands) inherit(cmd, program);
  return program;
}

/** Subcommands throw instead of exiting and write through the injected streams. */
function inherit(cmd: Command, program: Command): void {
  cmd.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError();
  for (const sub of cmd.commands) inherit(sub, program);
}

const VERSION = '0.1.0';

/** Runs the CLI and returns the process exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0;
      const usage = new CkptError('INVALID_ARGUMENT', err.message.replace(/^error: /, ''), { commander: err.code });
      createOutput(io, json).error(usage);
      return exitCodeOf(usage);
    }
    createOutput(io, json).error(err);
    return exitCodeOf(err);
  }
}

function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}
