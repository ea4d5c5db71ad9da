// Runs before every test file of `npm test` (vitest `setupFiles`). Those files share their worker
// processes (`isolate: false`: each file importing the library afresh took about half the suite's
// time), so what one file leaves in process.env, the current folder or the umask — several set
// CKPT_NO_DAEMON at their top, which a later file's daemon tests must not inherit — is put back
// once the file has run.
import { afterAll } from 'vitest';

const env = { ...process.env };
const cwd = process.cwd();
const umask = process.umask();

afterAll(() => {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  Object.assign(process.env, env);
  if (process.cwd() !== cwd) process.chdir(cwd);
  process.umask(umask);
});
