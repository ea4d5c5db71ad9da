// The files an `apply_patch` call touches (OpenAI Codex CLI, and opencode with GPT models): the patch
// names them only in its file headers — `*** Add File: P`, `*** Update File: P`, `*** Delete File: P`
// and `*** Move to: Q` after an update — relative to the agent's cwd or absolute, as the model wrote
// them. Body lines of a hunk start with ' ', '+' or '-' (or are `@@` markers), so a header can never be
// mistaken for content. Pure.

export interface PatchPaths {
  /** Every path the patch names, in order, without duplicates: sources and move destinations. */
  paths: string[];
  /** False when the text has no `*** Begin Patch` envelope and no file header: not a patch at all. */
  isPatch: boolean;
}

const HEADER = /^\*\*\* (Add File|Update File|Delete File|Move to): (.*)$/;

export function patchPaths(patch: string): PatchPaths {
  const paths: string[] = [];
  let envelope = false;
  for (const raw of patch.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '*** Begin Patch') envelope = true;
    const m = HEADER.exec(line);
    if (!m) continue;
    // Codex trims the path it reads from a header; so does this, so both name the same file.
    const path = m[2]!.trim();
    if (path.length > 0 && !paths.includes(path)) paths.push(path);
  }
  return { paths, isPatch: envelope || paths.length > 0 };
}
