// One rule file's gitignore matcher (ignore-rules.ts), split by what a path starts with: a pattern
// anchored with a leading `/` whose first segment is a plain name (`/git-add`, `/Debug/`, `/t/x`) can
// only match a path that starts with that name (or its descendants, through its parent folder), so a
// path is tested against the rules keyed by its own first segment and the rules that are not keyed,
// in the file's order — the `ignore` package's answer for the whole file, since rules that cannot
// match the path or its parents never change it. git.git's root .gitignore has 211 such rules of
// 243: a path is tested against ~30 instead of all of them (a walk after that file changed re-tests
// every path).
import ignore, { type Ignore } from 'ignore';

export interface IgnoreMatcher {
  /** As `Ignore.test` of the whole text: `ignored` / `unignored` by the last rule that matches. */
  test(path: string): { ignored: boolean; unignored: boolean };
}

/** Characters that make a segment a pattern rather than a plain name (and escapes, kept whole). */
const SPECIAL = /[*?[\]\\!]/;

/** The plain first segment a rule is keyed by, or undefined when the rule may match anywhere. */
export function ruleKey(line: string): string | undefined {
  const body = line.startsWith('!') ? line.slice(1) : line;
  if (!body.startsWith('/')) return undefined; // unanchored (or anchored only by an inner slash: not keyed)
  const rest = body.slice(1).trimEnd();
  const end = rest.indexOf('/');
  const first = end < 0 ? rest : rest.slice(0, end);
  if (first === '' || first === '.' || first === '..' || SPECIAL.test(first) || /\s/.test(first)) return undefined;
  return first;
}

export function createIgnoreMatcher(text: string, ignorecase: boolean): IgnoreMatcher {
  const make = (t: string): Ignore => ignore({ allowRelativePaths: true, ignorecase }).add(t);
  const lines = text.split(/\r?\n/);
  const keys = lines.map((l) => {
    const k = ruleKey(l);
    return k !== undefined && ignorecase ? k.toLowerCase() : k;
  });
  const keyed = new Set(keys.filter((k): k is string => k !== undefined));
  // Few keyed rules: one matcher of the whole text costs no more.
  if (keyed.size < 8) {
    const whole = make(text);
    return { test: (p) => whole.test(p) };
  }
  const unkeyed = make(lines.filter((_, i) => keys[i] === undefined).join('\n'));
  const byKey = new Map<string, Ignore>();
  return {
    test(p) {
      const slash = p.indexOf('/');
      let first = slash < 0 ? p : p.slice(0, slash);
      if (ignorecase) first = first.toLowerCase();
      if (!keyed.has(first)) return unkeyed.test(p);
      let m = byKey.get(first);
      if (!m) {
        m = make(lines.filter((_, i) => keys[i] === undefined || keys[i] === first).join('\n'));
        byKey.set(first, m);
      }
      return m.test(p);
    },
  };
}
