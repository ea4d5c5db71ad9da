// The version `ckpt --version` prints and `ckpt init` reports (keep in step with package.json; a
// test checks they agree).
export const VERSION = '0.1.0';
