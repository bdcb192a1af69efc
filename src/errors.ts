/** Errors whose message is meant for the user; the CLI prints them without a stack. */
export class UserError extends Error {
  constructor(
    message: string,
    /** 2: bad usage or input the user must fix; 1: the run found problems. */
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message);
  }
}
