/**
 * A deadline on a pending command, whatever the client does with it.
 *
 * @module
 */

/**
 * Settles like `sent`, or rejects with a `TimeoutError` `DOMException` after
 * `ms` milliseconds, whichever comes first. A late rejection of `sent` is
 * handled (by the race), so it never surfaces as unhandled.
 *
 * @param sent The pending command.
 * @param ms The deadline, in milliseconds.
 * @returns The command's reply.
 */
export function withDeadline<T>(sent: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DOMException(
            `Redis did not answer within ${ms} ms`,
            "TimeoutError",
          ),
        ),
      ms,
    );
  });
  return Promise.race([sent, deadline]).finally(() => clearTimeout(timer));
}
