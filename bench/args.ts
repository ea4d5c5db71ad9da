// Command-line flags of `npm run bench -- …`.
import { parseArgs } from 'node:util';

export interface BenchArgs {
  quick: boolean;
  json: boolean;
  markdown: boolean;
  /** Render a saved --json result instead of running. */
  from?: string;
  /** Also write the result (JSON with --json, else the plain table) to this file. */
  out?: string;
  files: number;
  seed: number;
  keep: boolean;
  dir?: string;
  only?: string[];
  runs?: number;
  warmup?: number;
  help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --quick         ~20,000-file tree, fewer runs (under a minute)
  --files N       number of files in the generated tree (default 100000; quick 20000)
  --seed N        generator seed (default 1)
  --json          print one JSON document on stdout (progress goes to stderr; use
                  \`npm run -s bench\` so npm's own banner stays off stdout)
  --markdown      print the results as a Markdown table (for docs/BENCHMARKS.md)
  --out FILE      also write the result to FILE
  --from FILE     render a result saved with --json (as a table, or --markdown) without running
  --keep          keep the generated tree (and its git repo) in the temp folder for the next run
  --dir DIR       cache generated trees under DIR (implies --keep)
  --only a,b      run only these figures (capture-one, scan-first, scan-incremental,
                  restore-1000, disk-first, open-session, hook-capture, hook-scan, scan-first-git,
                  scan-checkout-git, restore-580-git (real history, ../shared/fixtures), daemon-scan-incremental,
                  http-hook-capture, hook-scan-daemon, cli-scan, agent-tool-call (the real Claude Code))
  --runs N        measured runs of the expensive figures (default 5; quick 3)
  --warmup N      warm-up runs (default 1)
  -h, --help      this text`;

function int(name: string, v: string | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v.replace(/[_,]/g, ''));
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${v}`);
  return n;
}

export function parseBenchArgs(argv: string[]): BenchArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      markdown: { type: 'boolean', default: false },
      out: { type: 'string' },
      from: { type: 'string' },
      files: { type: 'string' },
      seed: { type: 'string' },
      keep: { type: 'boolean', default: false },
      dir: { type: 'string' },
      only: { type: 'string' },
      runs: { type: 'string' },
      warmup: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
  });
  const quick = values.quick ?? false;
  return {
    quick,
    json: values.json ?? false,
    markdown: values.markdown ?? false,
    out: values.out,
    from: values.from,
    files: int('files', values.files, 2000) ?? (quick ? 20_000 : 100_000),
    seed: int('seed', values.seed, 0) ?? 1,
    keep: (values.keep ?? false) || values.dir !== undefined,
    dir: values.dir,
    only: values.only?.split(',').map((s) => s.trim()).filter(Boolean),
    runs: int('runs', values.runs, 1),
    warmup: int('warmup', values.warmup, 0),
    help: values.help ?? false,
  };
}
