// Which machine this is, for shared stores (issue 17): two machines working on two clones at the same
// path must get different workspace ids, so a shared store's workspace id hashes the machine id with
// the root. `CKPT_MACHINE_ID` overrides; else /etc/machine-id (systemd, stable across reboots); else
// an id generated once and kept in `$XDG_CONFIG_HOME/ckpt/machine-id` (or ~/.config/ckpt/machine-id).
// Local stores do not use it, so their workspace ids stay what they were.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CkptError } from '../errors.js';

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

async function readId(file: string): Promise<string | undefined> {
  try {
    const text = (await readFile(file, 'utf8')).trim();
    return ID_RE.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

export async function machineId(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (env.CKPT_MACHINE_ID !== undefined) {
    if (!ID_RE.test(env.CKPT_MACHINE_ID)) throw new CkptError('INVALID_ARGUMENT', `CKPT_MACHINE_ID must match ${ID_RE.source}`, {});
    return env.CKPT_MACHINE_ID;
  }
  const system = (await readId('/etc/machine-id')) ?? (await readId('/var/lib/dbus/machine-id'));
  if (system) return system;
  const file = join(env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homedir(), '.config'), 'ckpt', 'machine-id');
  const kept = await readId(file);
  if (kept) return kept;
  const fresh = randomBytes(16).toString('hex');
  await mkdir(dirname(file), { recursive: true });
  // `wx`: of two processes generating at once, one writes and both then read the same id.
  await writeFile(file, `${fresh}\n`, { flag: 'wx', mode: 0o644 }).catch(() => {});
  return (await readId(file)) ?? fresh;
}
