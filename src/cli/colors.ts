// Colours only where a person reads them: the stream is a terminal, NO_COLOR is not set and the
// terminal is not `dumb` (FORCE_COLOR forces them). Piped output stays plain text.
import picocolors from 'picocolors';

export type Colors = ReturnType<typeof picocolors.createColors>;

/**
 * The CLI's colours, decided once for this process by its stdout. picocolors' own default also turns
 * colours on whenever `CI` is set, which put escape codes into piped output and log files (a daemon's
 * serve.log under CI); every command imports this instead of picocolors.
 */
export const pc: Colors = colorsFor(process.stdout, process.env);

export function colorsFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Colors {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0';
  return picocolors.createColors(forced || (Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== 'dumb'));
}

/** A unified patch with git's colours: headers bold, hunk lines cyan, additions green, removals red. */
export function colorPatch(patch: string, c: Colors): string {
  return patch
    .split('\n')
    .map((line) => {
      if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('===') || /^(old|new) mode /.test(line)) return c.bold(line);
      if (line.startsWith('@@')) return c.cyan(line);
      if (line.startsWith('+')) return c.green(line);
      if (line.startsWith('-')) return c.red(line);
      return line;
    })
    .join('\n');
}
