// The commands of a group as data: each one's usage, description, options and what it runs, added to
// commander in table order (that order is the order `--help` lists them in). Option sets that several
// commands share are one array spread into each (restore.ts's changesFiles, session.ts's info flags).
import { Option, type Command } from 'commander';
import { action } from './action.js';

/** An option: commander's `Option`, or its flags, description and default. */
export type OptionSpec = Option | readonly [flags: string, description: string, defaultValue?: string];

export interface CommandSpec {
  /** The name and its arguments, as commander takes them: `restore <tag> [paths...]`. */
  use: string;
  description: string;
  /** In the order the help lists them. */
  options?: readonly OptionSpec[];
  /** Only reads the store: never starts one (a mistyped --store is NOT_FOUND, nothing made; CliContextOptions). */
  reads?: boolean;
  /**
   * Acts on what a store holds already (a session, a workspace, its blobs) and so cannot do anything in
   * a store that is not there: opened as `reads` is (a mistyped --store is NOT_FOUND, nothing made), though
   * the command writes (CliContextOptions.existing).
   */
  existing?: boolean;
  /** Wrapped by action(): the arguments (then the options object), the CLI context, the output. */
  run: Parameters<typeof action>[0];
}

export function addCommands(parent: Command, specs: readonly CommandSpec[]): void {
  for (const spec of specs) {
    const cmd = parent.command(spec.use).description(spec.description);
    for (const o of spec.options ?? []) {
      if (o instanceof Option) cmd.addOption(o);
      else cmd.option(o[0], o[1], o[2]);
    }
    cmd.action(action(spec.run, { reads: spec.reads === true, existing: spec.existing === true }));
  }
}
