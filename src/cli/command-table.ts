// The commands of a group as data: each one's usage, description, options and what it runs, added to
// commander in table order (that order is the order `--help` lists them in). Option sets that several
// commands share are one array spread into each (restore.ts's changesFiles, session.ts's info flags).
import { Option, type Command } from 'commander';
import { parseTag } from '../index.js';
import { action } from './action.js';
import { TAG_HELP } from './program.js';

/** An option: commander's `Option`, or its flags, description and default. */
export type OptionSpec = Option | readonly [flags: string, description: string, defaultValue?: string];

export interface CommandSpec {
  /** The name and its arguments, as commander takes them: `restore <tag> [paths...]`. */
  use: string;
  /** Other names a newcomer reaches for (`session create` for `session new`): help shows them as `new|create`. */
  aliases?: readonly string[];
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
  /**
   * The arguments and options (by commander's attribute name: `at` for `--at <tag>`) that hold a tag:
   * their syntax is checked before the command runs, so a bad tag is INVALID_ARGUMENT (exit 2) before
   * any look-up could answer "no session" (exit 3). Only these commands print the tag syntax after
   * their help: an argument's name says nothing (`store copy <from> <to>` takes stores, `diff <from>` tags).
   */
  tags?: readonly string[];
  /** Wrapped by action(): the arguments (then the options object), the CLI context, the output. */
  run: Parameters<typeof action>[0];
}

export function addCommands(parent: Command, specs: readonly CommandSpec[]): void {
  for (const spec of specs) {
    const cmd = parent.command(spec.use).description(spec.description);
    if (spec.aliases) cmd.aliases(spec.aliases);
    for (const o of spec.options ?? []) {
      if (o instanceof Option) cmd.addOption(o);
      else cmd.option(o[0], o[1], o[2]);
    }
    if (spec.tags && spec.tags.length > 0) cmd.addHelpText('after', TAG_HELP);
    cmd.action(action(spec.tags ? tagsChecked(cmd, spec.tags, spec.run) : spec.run, { reads: spec.reads === true, existing: spec.existing === true }));
  }
}

/** `run` after the syntax of every tag it is given (`names`: arguments and option attributes of `cmd`). */
function tagsChecked(cmd: Command, names: readonly string[], run: CommandSpec['run']): CommandSpec['run'] {
  const args = cmd.registeredArguments.map((a) => a.name());
  const unknown = names.filter((n) => !args.includes(n) && !cmd.options.some((o) => o.attributeName() === n));
  if (unknown.length > 0) throw new Error(`${cmd.name()}: no argument or option ${unknown.join(', ')}`); // a mistake in the table
  return (values, ctx, out, c) => {
    const opts = (values[args.length] ?? {}) as Record<string, unknown>;
    for (const name of names) {
      const i = args.indexOf(name);
      const value = i >= 0 ? values[i] : opts[name];
      // Named as the usage writes it (errors' `option`): `<tag>`, `--at`.
      if (typeof value === 'string') parseTag(value, i >= 0 ? `<${name}>` : (cmd.options.find((o) => o.attributeName() === name)?.long ?? name));
    }
    return run(values, ctx, out, c);
  };
}
