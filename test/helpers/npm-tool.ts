// A pinned npm package installed once into a cache folder outside the repository, for tests that
// drive a real third-party client (the MCP Inspector CLI): too big to be a devDependency, and used only
// by long suites. CKPT_TEST_TOOLS sets the folder (default ~/.cache/ckpt-test-tools). An install goes
// to a scratch folder renamed into place, so parallel or interrupted runs never see half of one.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export function toolsDir(): string {
  return process.env.CKPT_TEST_TOOLS ?? join(homedir(), '.cache', 'ckpt-test-tools');
}

/** The folder holding `node_modules/<name>` at exactly `version`, installing it on first use. */
export async function npmTool(name: string, version: string): Promise<string> {
  const dir = join(toolsDir(), `${name.replace('/', '+')}@${version}`);
  if (existsSync(join(dir, 'node_modules', ...name.split('/'), 'package.json'))) return dir;
  await mkdir(toolsDir(), { recursive: true });
  const scratch = await mkdtemp(join(toolsDir(), '.install-'));
  try {
    await writeFile(join(scratch, 'package.json'), '{"private":true}\n');
    await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', `${name}@${version}`], { cwd: scratch, timeout: 300_000 });
    await rename(scratch, dir).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err; // another run installed it first
      await rm(scratch, { recursive: true, force: true });
    });
  } catch (err) {
    await rm(scratch, { recursive: true, force: true });
    throw err;
  }
  return dir;
}
