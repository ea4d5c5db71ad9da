// What a help request asked for, read back from what commander parsed. Commander answers
// `ckpt help nope` (and `ckpt nope --help`, `ckpt session help nope`) with the help of the group,
// like a successful `ckpt help`, and shows only the first word of `ckpt help session list`; ckpt
// says the command is unknown (exit 2, as `ckpt nope` does) and shows the help of the whole path.
import type { Command } from 'commander';

export type HelpTopic =
  /** `help WORD…` naming a command: its help is the answer (exit 0, `{"help"}` with --json). */
  | { kind: 'command'; command: Command }
  /** A word that is no subcommand of the group `path` (`['ckpt', 'session']`): a usage error. */
  | { kind: 'unknown'; path: string[]; name: string }
  /** Commander's own answer stands (`--help` of a known command, a group without its subcommand). */
  | { kind: 'asIs' };

/** Reads the words each command parsed (commander's `args`, option values already taken out). */
export function helpTopic(program: Command): HelpTopic {
  const path = [program.name()];
  let cmd = program;
  for (;;) {
    const words = cmd.args.filter((a) => !a.startsWith('-'));
    const first = words[0];
    // Only a group (a command with subcommands and no action of its own) takes a command name.
    if (first === undefined || !isGroup(cmd)) return { kind: 'asIs' };
    const sub = findSub(cmd, first);
    if (sub) {
      cmd = sub;
      path.push(sub.name());
      continue;
    }
    if (first !== 'help') return { kind: 'unknown', path, name: first };
    return topicOf(cmd, path, words.slice(1));
  }
}

/** `help A B …` under `cmd`: every word down to a command without subcommands must name one. */
function topicOf(cmd: Command, path: string[], words: string[]): HelpTopic {
  let target = cmd;
  for (const word of words) {
    if (!isGroup(target)) break; // `help restore 1`: the rest are restore's arguments, as commander reads them
    const sub = findSub(target, word);
    if (!sub && word === 'help') continue; // `help help`: the group's own help, as before
    if (!sub) return { kind: 'unknown', path, name: word };
    target = sub;
    path = [...path, sub.name()];
  }
  return { kind: 'command', command: target };
}

function isGroup(cmd: Command): boolean {
  return cmd.commands.length > 0;
}

function findSub(cmd: Command, name: string): Command | undefined {
  return cmd.commands.find((c) => c.name() === name || c.aliases().includes(name));
}
