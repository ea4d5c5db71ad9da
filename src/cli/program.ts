// The `ckpt` program without its commands: the global flags, commander's configuration, and the only
// top-level catch, which maps every failure to its exit code (DESIGN §7) and, with --json, to a JSON
// error on stderr. With --json the process prints exactly one JSON document: the result,
// `{"help":…}`/`{"version":…}`, or the error. main.ts adds every command; scan-main.ts only `scan`.
import { basename } from 'node:path';
import { Command, CommanderError } from 'commander';
import { CkptError, exitCodeOf, toCkptError } from '../index.js';
import { strictHooks } from '../hooks/client/hook-client.js';
import { currentDir } from './current-dir.js';
import { helpTopic } from './help-topic.js';
import { createOutput, type CliIo } from './io.js';
import { CliExit } from './exit.js';
import { shellQuote } from './shell.js';
import { VERSION } from './version.js';

/** Printed after the help of every command that takes a tag (CommandSpec.tags: command-table.ts) and of `ckpt` itself. */
export const TAG_HELP = `
Tags name points in a session:
  N      the start of turn N (before its first capture); 0 is before the first turn
  N.K    just before the K-th capture of turn N (N.0 = N)
  @S     just after the event with sequence number S
Session ids may be shortened to any unique prefix, of the id or of its short part shown by
'session list' (e46 for 20261202-005836-e460fbc0), as git accepts short hashes.`;

/** What commander itself printed (help, version): sent to stdout, or wrapped in JSON, by runProgram(). */
export interface CommanderText {
  out: string;
  err: string;
}

/** The `ckpt` program with its global options and output capture, no commands yet (main.ts and the lean scan entry add theirs). */
export function createProgram(io: CliIo, captured: CommanderText = { out: '', err: '' }): Command {
  const program = new Command('ckpt')
    .description('Safe, fast undo for everything an AI coding agent does to a workspace.')
    .version(VERSION, '-V, --version')
    .option('--store <dir|url>', 'store folder or shared store URL postgres://…?blobs=s3://bucket (default: $CKPT_STORE, $CKPT_HOME, $XDG_DATA_HOME/ckpt or ~/.local/share/ckpt)')
    .option('--workspace <dir>', 'workspace root (default: found upward from the current folder: the nearest folder with a session, else the git top level, else the current folder)')
    .option('--session <id>', 'session id or unique prefix (default: the most recently updated session of the workspace)')
    .option('--json', 'print one JSON document on stdout (errors as JSON on stderr)')
    .option('--max-file-size <size>', 'largest file content captured, e.g. 16M (default: $CKPT_MAX_FILE_SIZE or 16M); larger files are recorded as skipped')
    .option('--refuse-oversize', 'a capture naming a file over the size cap fails (BLOB_TOO_LARGE) and records nothing ($CKPT_REFUSE_OVERSIZE=1)')
    .exitOverride()
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (s) => void (captured.out += s),
      writeErr: (s) => void (captured.err += s),
      outputError: () => {}, // reported by main() with the error code
    })
    .addHelpText('after', TAG_HELP);
  (program as Command & { ckptIo: CliIo }).ckptIo = io;
  return program;
}

/** Subcommands throw instead of exiting, write through runProgram()'s capture, and list the global options. */
export function inherit(cmd: Command, program: Command): void {
  cmd.exitOverride().configureOutput(program.configureOutput()).configureHelp(program.configureHelp());
  for (const sub of cmd.commands) inherit(sub, program);
}

/** Runs the program `build` makes over argv and returns the process exit code (the only top-level catch). */
export async function runProgram(argv: string[], io: CliIo, build: (io: CliIo, captured: CommanderText) => Command): Promise<number> {
  const captured: CommanderText = { out: '', err: '' };
  const program = build(io, captured);
  const json = wantsJson(argv);
  const out = createOutput(io, json);
  // `ckpt hook …` never breaks the agent running it (§9: exit 0 unless strict mode): its usage errors
  // (an agent or a flag of another ckpt version) are printed, and exit 0 — in Claude Code, exit 2
  // would block every tool call.
  const hookCall = commandPath(program, argv) === 'ckpt hook' && !strictHooks(io.env);
  const failed = (code: number): number => (hookCall ? 0 : code);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return (program as Command & { ckptExitCode?: number }).ckptExitCode ?? 0;
  } catch (err) {
    if (err instanceof CliExit) return err.exitCode;
    if (!(err instanceof CommanderError)) {
      // Converted once: what is printed and the exit code come from the same error.
      const error = toCkptError(err);
      out.error(error);
      return failed(exitCodeOf(error));
    }
    if (err.code === 'commander.version') {
      out.result({ version: VERSION }, () => captured.out);
      return 0;
    }
    const helpCodes = ['commander.help', 'commander.helpDisplayed'];
    const topic = helpCodes.includes(err.code) ? helpTopic(program) : ({ kind: 'asIs' } as const);
    if (topic.kind === 'unknown') return failed(await unknownCommand(topic.path, topic.name, io, json, build));
    if (topic.kind === 'command') {
      // `help A B`: the help of A B (commander printed A's, on stderr when A was no command),
      // asked for on purpose, so `{"help"}` with --json as `A B --help` gives.
      captured.out = captured.err = '';
      topic.command.outputHelp();
      out.result({ help: captured.out }, () => captured.out);
      return 0;
    }
    // `--help`, or a command group given without its subcommand (`ckpt`, `ckpt session`): its help.
    const help = captured.out + captured.err;
    if (err.code === 'commander.helpDisplayed' || (err.code === 'commander.help' && !json)) {
      out.result({ help }, () => help);
      return 0;
    }
    const command = commandPath(program, argv);
    const message = err.code === 'commander.help' ? 'no command given' : err.message.replace(/^error: /, '');
    const usage = new CkptError('INVALID_ARGUMENT', message, { commander: err.code, usage: `${command} --help` });
    out.error(usage);
    if (!json) io.stderr.write(`run '${command} --help' for usage\n`);
    return failed(exitCodeOf(usage));
  }
}

/**
 * `ckpt help nope`, `ckpt nope --help`: the usage error `ckpt nope` gives, with commander's
 * suggestion, got by parsing the bare name under its group in a fresh program (it fails before any
 * action runs: the name is no command there).
 */
async function unknownCommand(path: string[], name: string, io: CliIo, json: boolean, build: (io: CliIo, captured: CommanderText) => Command): Promise<number> {
  let message = `unknown command '${name}'`;
  try {
    await build(io, { out: '', err: '' }).parseAsync([...path.slice(1), name], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError && err.code === 'commander.unknownCommand') message = err.message.replace(/^error: /, '');
  }
  const command = path.join(' ');
  const usage = new CkptError('INVALID_ARGUMENT', message, { commander: 'commander.unknownCommand', usage: `${command} --help` });
  createOutput(io, json).error(usage);
  if (!json) io.stderr.write(`run '${command} --help' for usage\n`);
  return exitCodeOf(usage);
}

/** `--json` anywhere before a `--` (the flag is global: commander accepts it at any position). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/** `ckpt session fork` for the subcommands named in argv (for the usage hint). */
function commandPath(program: Command, argv: readonly string[]): string {
  const names = ['ckpt'];
  let cmd: Command | undefined = program;
  for (const arg of argv) {
    if (arg === '--') break;
    if (arg.startsWith('-')) continue;
    const sub: Command | undefined = cmd.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) continue;
    names.push(sub.name());
    cmd = sub;
  }
  return names.join(' ');
}

export function processIo(): CliIo {
  // A reader that stops early (`ckpt log | head`) closes the pipe: the command still finishes what it
  // is doing (a restore never stops half-way for it), its further output goes nowhere.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', ignoreClosedPipe);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    // Read when a command needs it: a removed current folder is that command's IO error (current-dir.ts).
    get cwd() {
      return currentDir();
    },
    invokedAs: invocation(process.argv[1]),
  };
}

function ignoreClosedPipe(err: NodeJS.ErrnoException): void {
  if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
}

/** `ckpt` when started through its bin link, else `node <script>`: a command that works as printed. */
function invocation(script: string | undefined): string {
  if (!script || basename(script) === 'ckpt') return 'ckpt';
  return `node ${shellQuote(script)}`;
}
