// The lean entry of `ckpt … scan …` (DESIGN §9): scripts, people and the daemon's full scans
// (scan-in-child.ts) start a new process for each scan, so this loads the global program and the scan
// command only — not the other commands nor what they load (issue 31: `ckpt scan` of a 30,000-file
// tree in a new process). bin/ckpt.js routes here when isScanCall(argv); anything else (help, version,
// another command) runs the full CLI (main.ts), which has the same scan command.
import { addCommands } from './command-table.js';
import { scanCommand } from './commands/scan.js';
import type { CliIo } from './io.js';
import { createProgram, inherit, processIo, runProgram } from './program.js';

/** Global options that take a value as the next argument (program.ts). */
const VALUE_FLAGS = new Set(['--store', '--workspace', '--session', '--max-file-size']);

/**
 * True when argv's command is `scan` and nothing asks for help or the version: the first argument that
 * is neither an option nor a global option's value. Unknown options are left to commander, which
 * reports them as the full CLI does (both programs have the same global options).
 */
export function isScanCall(argv: readonly string[]): boolean {
  if (argv.some((a) => a === '-h' || a === '--help' || a === '-V' || a === '--version' || a === '--')) return false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (VALUE_FLAGS.has(a)) i++;
    else if (!a.startsWith('-')) return a === 'scan';
  }
  return false;
}

/** Runs `ckpt … scan …` and returns the process exit code (the same as main() would). */
export function scanMain(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runProgram(argv, io, (programIo, captured) => {
    const program = createProgram(programIo, captured);
    addCommands(program, [scanCommand]);
    for (const cmd of program.commands) inherit(cmd, program);
    return program;
  });
}
