// ckpt op: the first scan of a clean git work tree by a fresh store. Same call as scan-first; the
// library is expected to seed the baseline from git's index and objects instead of reading files.
export { scanFirst as scanFirstGit } from './scan-first.js';
