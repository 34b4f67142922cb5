/**
 * The app's data folder (`./data/`): password hashes, the key-value file
 * and the development secret live there, so the folder is created 0700 and
 * each file 0600 where the runtime has POSIX modes (not on Windows).
 *
 * @module
 */

const POSIX = Deno.build.os !== "windows";

/**
 * Creates the folder 0700, or narrows an existing one to 0700.
 *
 * @param dir The folder.
 */
export async function privateDir(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  if (POSIX && ((await Deno.stat(dir)).mode ?? 0) & 0o077) {
    await Deno.chmod(dir, 0o700);
  }
}

/**
 * Makes a file readable by its owner only before a library opens it: an
 * empty file is created 0600 when missing (SQLite and Deno KV take an empty
 * file as a new database, and give its `-wal` and `-shm` files the same
 * mode), and an existing file and its sidecars are narrowed to 0600.
 *
 * @param path The file.
 */
export async function privateFile(path: string): Promise<void> {
  try {
    await Deno.writeFile(path, new Uint8Array(), {
      createNew: true,
      mode: 0o600,
    });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  if (!POSIX) return;
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    try {
      if (((await Deno.stat(file)).mode ?? 0) & 0o077) {
        await Deno.chmod(file, 0o600);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}
