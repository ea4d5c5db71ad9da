// The ignore rules of the previous scan (DESIGN §10 "Scans"), rebuilt from the rule-file texts its
// index keeps (walk.ts `ruleTexts`: the root's sources, and each folder's `.gitignore`/`.ckptignore`).
// A scan asks them about paths it finds new when the rules changed since: one the old rules ignored
// was there all along as far as ckpt knows (its name was un-ignored), not created. The texts come from
// the store: anything malformed means "unknown" (undefined), never a guess.
import { posix, relative, sep, join } from 'node:path';
import { createIgnoreRules, findGitTop, IGNORE_FILE_NAMES, type IgnoreRules, type IgnoreRulesOptions } from '../workspace/ignore-rules.js';

export function previousIgnoreRules(options: Omit<IgnoreRulesOptions, 'read'>, texts: ReadonlyMap<string, string>): IgnoreRules | undefined {
  const root = parseRoot(texts.get(''));
  if (!root) return undefined;
  const gitTop = findGitTop(options.root);
  const exclude = gitTop !== undefined ? join(gitTop, '.git', 'info', 'exclude') : undefined;
  return createIgnoreRules({
    ...options,
    read(abs) {
      if (abs === exclude) return root.get('.git/info/exclude');
      const rel = relative(options.root, abs).split(sep).join('/');
      const dir = posix.dirname(rel);
      // The root's own rule files and those of folders above it (`../.gitignore`) are root sources.
      if (dir === '.' || rel.startsWith('../')) return root.get(rel);
      return folderText(texts.get(dir), posix.basename(rel));
    },
  });
}

/** The root's sources (`[storeRel, [[name, text], …]]`, walk.ts rootRulesText). */
function parseRoot(text: string | undefined): Map<string, string> | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    if (!Array.isArray(value) || !Array.isArray(value[1])) return undefined;
    const out = new Map<string, string>();
    for (const entry of value[1] as unknown[]) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'string') return undefined;
      out.set(entry[0], entry[1]);
    }
    return out;
  } catch {
    return undefined;
  }
}

/** One rule file of a folder (`[gitignore, ckptignore]`, null where absent). */
function folderText(text: string | undefined, name: string): string | undefined {
  const k = (IGNORE_FILE_NAMES as readonly string[]).indexOf(name);
  if (text === undefined || k < 0) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) && typeof value[k] === 'string' ? (value[k] as string) : undefined;
  } catch {
    return undefined;
  }
}
