// CLI output: one JSON document on stdout with --json, a short human summary otherwise; errors as
// `{"error":{code,message,data}}` on stderr with --json (DESIGN §9). Streams are injectable for tests.
import { pc } from './colors.js';
import { terminalText } from './terminal-text.js';
import { toCkptError } from '../index.js';

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** How this process was started (`ckpt`, or `node /path/bin/ckpt.js`), for hints printed as commands. */
  invokedAs?: string;
}

export interface Output {
  json: boolean;
  /** Prints the command's result: the JSON document, or the human text `human(result)` returns. */
  result<T>(value: T, human: (value: T) => string): void;
  /** A progress or info line for people (stderr; silent with --json). */
  info(line: string): void;
  error(err: unknown): void;
  /**
   * A person can answer a question: stdin is a terminal. Only stdin decides — `ckpt restore 1 | tee x`
   * still asks (on stderr), while hooks and scripts (stdin not a terminal) are never asked.
   */
  canAsk: boolean;
}

export function createOutput(io: CliIo, json: boolean): Output {
  // What people read is shown with its control characters made visible (terminal-text.ts); JSON escapes its own.
  const show = (stream: NodeJS.WritableStream, text: string): void => void stream.write(terminalText(text, pc.isColorSupported));
  return {
    json,
    canAsk: Boolean(io.stdin.isTTY),
    result(value, human) {
      if (json) io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      else {
        const text = human(value);
        if (text) show(io.stdout, text.endsWith('\n') ? text : `${text}\n`);
        // Failures after the operation happened (cache writes on a full disk): said, not fatal.
        const warnings = (value as { warnings?: unknown } | null)?.warnings;
        if (Array.isArray(warnings)) for (const w of warnings) show(io.stderr, `${pc.yellow('warning')} ${String(w)}\n`);
      }
    },
    info(line) {
      if (!json) show(io.stderr, `${line}\n`);
    },
    error(err) {
      const e = toCkptError(err);
      if (json) io.stderr.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
      else show(io.stderr, `${pc.red('error')} ${pc.dim(`[${e.code}]`)} ${e.message}\n`);
    },
  };
}
