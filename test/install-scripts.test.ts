// `npm ci` prints no install-script warning (issue 10, item 22): npm 11 blocks dependency install
// scripts it has no decision for and warns about each. Every locked package with an install script
// must have an `allowScripts` decision in package.json (npm's documented mechanism,
// `npm install-scripts approve|deny`).
import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';

const root = new URL('../', import.meta.url);

it('every locked package with an install script has an allowScripts decision', async () => {
  const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { allowScripts?: Record<string, boolean> };
  const lock = JSON.parse(await readFile(new URL('package-lock.json', root), 'utf8')) as {
    packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
  };
  const decided = new Set(Object.keys(pkg.allowScripts ?? {}));
  const withScripts = Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && p.hasInstallScript)
    .map(([path, p]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), version: p.version }));
  expect(withScripts.length).toBeGreaterThan(0); // esbuild (through vite and tsx) has one today
  const undecided = withScripts.filter((p) => !decided.has(p.name) && !decided.has(`${p.name}@${p.version}`));
  expect(undecided).toEqual([]);
});
