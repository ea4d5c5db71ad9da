// Commands the CLI prints for people to run next (undo hints, "run gc"): they work as printed — how
// this process was started, the --store / --workspace it was given (absolute; a shared store's URL as
// given, without its password) and the session when one was named, each word quoted for a POSIX shell.
import { resolve } from 'node:path';
import { isSharedStoreUrl, redactUrl } from '../index.js';
import type { CliContext } from './context.js';
import { shellCommand } from './shell.js';

export function commandHint(ctx: CliContext, words: readonly string[], options: { session?: string } = {}): string {
  const globals: string[] = [];
  // A shared store URL as given (a folder made absolute would read `/cwd/postgres:/…`), password hidden (README: never shown).
  if (ctx.flags.store !== undefined) globals.push('--store', isSharedStoreUrl(ctx.flags.store) ? redactUrl(ctx.flags.store) : resolve(ctx.io.cwd, ctx.flags.store));
  if (ctx.flags.workspace !== undefined) globals.push('--workspace', resolve(ctx.io.cwd, ctx.flags.workspace));
  if (options.session !== undefined) globals.push('--session', options.session);
  return `${ctx.io.invokedAs ?? 'ckpt'} ${shellCommand([...globals, ...words])}`;
}
