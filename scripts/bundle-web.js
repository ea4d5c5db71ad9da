// `npm run build` step three: the web timeline's files into dist/web/ — src/web/*.{html,css,svg} as
// they are, dist/web/app.js bundled by esbuild from the page's modules (src/web/app.js and the views
// it imports: one request instead of seven; not minified, as the page was served before), and
// dist/web/highlight.js bundled and minified from src/web/build/highlight.js (highlight.js's core and
// the languages the page highlights). The page stays build-free: served from src/web/ (a run from
// source) the browser loads the same modules one by one.
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/web`;
await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
for (const entry of await readdir(`${root}src/web`, { withFileTypes: true })) {
  if (entry.isFile() && !entry.name.endsWith('.js')) await copyFile(`${root}src/web/${entry.name}`, `${outdir}/${entry.name}`);
}
const common = { absWorkingDir: root, outdir, bundle: true, format: 'esm', platform: 'browser', target: 'es2022', legalComments: 'none', logLevel: 'warning' };
await build({
  ...common,
  entryPoints: { app: 'src/web/app.js' },
  // Loaded on the first diff, from its own file.
  external: ['/web/highlight.js'],
});
await build({ ...common, entryPoints: { highlight: 'src/web/build/highlight.js' }, minify: true });
