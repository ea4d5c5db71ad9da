// Exit codes of outcomes that are not errors (DESIGN §7 maps the errors): a restore the user
// cancelled at the confirmation. Thrown by a command after it printed its result; main() returns the code.

/** The user answered no (or closed the prompt): nothing was changed. Distinct from every error code. */
export const EXIT_CANCELLED = 10;

export class CliExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
    this.name = 'CliExit';
  }
}
