// The layer map of DESIGN §8 (scripts/eslint-layers.js) holds: imports against it fail `npm run lint`,
// a folder missing from the map fails, type-only allowances admit only types, and every folder of
// src/ is in the map and in DESIGN §8's table.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS, layerOf } from '../scripts/eslint-layers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const eslint = new ESLint({ cwd: root });
const lint = async (file: string, text: string): Promise<string[]> =>
  (await eslint.lintText(text, { filePath: `${root}${file}` }))[0]!.messages.filter((m) => m.ruleId === 'layers/allowed-imports' || m.message.includes('layer map')).map((m) => m.message);

describe('layer map', () => {
  it('refuses an upward import, admits a downward one', async () => {
    expect(await lint('src/capture/probe.ts', "import { prune } from '../gc/prune.js';\nexport const p = prune;\n")).toEqual(['capture may not import gc: see the layer map in DESIGN §8']);
    expect(await lint('src/gc/probe.ts', "import { startTurn } from '../capture/turn.js';\nimport { scan } from '../scan/scan.js';\nexport const p = [startTurn, scan];\n")).toEqual(['gc may not import capture: see the layer map in DESIGN §8']);
    expect(await lint('src/restore/probe.ts', "import { scan } from '../scan/scan.js';\nexport const p = scan;\n")).toEqual([]);
  });

  it('keeps drivers off the stores above them and adapters on the public API', async () => {
    expect(await lint('src/storage/fs/probe.ts', "import { createBlobStore } from '../blob-store.js';\nimport type { StoreBackend } from '../backend.js';\nexport const p: [typeof createBlobStore, StoreBackend?] = [createBlobStore];\n")).toEqual([
      'storage/fs may not import storage: see the layer map in DESIGN §8',
    ]);
    expect(await lint('src/mcp/probe.ts', "import { scan } from '../scan/scan.js';\nimport { CkptError } from '../index.js';\nexport const p = [scan, CkptError];\n")).toEqual(['mcp may not import scan: see the layer map in DESIGN §8']);
  });

  it('admits a types-only layer with import type only', async () => {
    expect(await lint('src/api/probe.ts', "import type { Store } from '../store.js';\nexport type P = Store;\n")).toEqual([]);
    expect(await lint('src/api/probe.ts', "import { openStore } from '../store.js';\nexport const p = openStore;\n")).toEqual(['api may not import store (types only): see the layer map in DESIGN §8']);
  });

  it('fails a folder the map does not know', async () => {
    expect(await lint('src/newroom/probe.ts', "export const p = 1;\n")).toEqual(['newroom is not in the layer map (scripts/eslint-layers.js, DESIGN §8)']);
  });

  it('has every folder of src/ in the map and in DESIGN §8', () => {
    const design = readFileSync(`${root}docs/DESIGN.md`, 'utf8');
    const section = design.slice(design.indexOf('## 8.'), design.indexOf('## 9.'));
    const names: string[] = [];
    for (const e of readdirSync(`${root}src`, { withFileTypes: true })) {
      if (e.isDirectory()) names.push(`${e.name}/`);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) names.push(e.name);
    }
    for (const e of readdirSync(`${root}src/storage`, { withFileTypes: true })) if (e.isDirectory()) names.push(`storage/${e.name}/`);
    for (const name of names) {
      if (name !== 'web/') expect(Object.keys(LAYERS), name).toContain(layerOf(name.endsWith('/') ? `${name}x.ts` : name));
      expect(section, name).toContain(`\`${name}\``);
    }
  });
});
