// Runs before every test file (vitest `setupFiles`, every tier): a property that failed — in CI its
// seed is new each run — is replayed by any of them with the seed from fast-check's report,
//   CKPT_PROPERTY_SEED=875072330 npx vitest run test/scan-property.test.ts
// The same seed generates the same cases, so the run fails at the same case; endOnFailure stops
// there, unshrunk (fast-check takes no `path` globally, and shrinking again may take minutes).
import fc from 'fast-check';

const seed = process.env.CKPT_PROPERTY_SEED;
if (seed) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(seed), endOnFailure: true });
