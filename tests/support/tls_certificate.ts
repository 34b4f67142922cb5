/**
 * A certificate for a TLS test on 127.0.0.1: a self-signed P-256 one for
 * `localhost`, made by openssl for the run, and the SHA-256 hash of its
 * public key that Chromium's `--ignore-certificate-errors-spki-list` trusts
 * (DBSC needs a secure context).
 *
 * @module
 */

/**
 * Runs a command, feeding it `stdin` when given.
 *
 * @param cmd The command and its arguments.
 * @param stdin What to write to its standard input.
 * @returns Its standard output.
 * @throws {Error} With its standard error when it fails.
 */
export async function run(
  cmd: string[],
  stdin?: Uint8Array,
): Promise<Uint8Array> {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(stdin);
    await w.close();
  }
  const out = await child.output();
  if (!out.success) {
    throw new Error(
      `${cmd[0]} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return out.stdout;
}

/**
 * A self-signed P-256 certificate for localhost and its SPKI hash.
 *
 * @param dir Where the key and certificate files go.
 * @returns The PEM certificate and key, and the base64 SPKI hash.
 */
export async function makeCertificate(dir: string) {
  await run([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    `${dir}/key.pem`,
    "-out",
    `${dir}/cert.pem`,
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost",
  ]);
  const pub = await run([
    "openssl",
    "x509",
    "-in",
    `${dir}/cert.pem`,
    "-pubkey",
    "-noout",
  ]);
  const der = await run(["openssl", "pkey", "-pubin", "-outform", "der"], pub);
  const hash = await crypto.subtle.digest(
    "SHA-256",
    der as Uint8Array<ArrayBuffer>,
  );
  return {
    cert: await Deno.readTextFile(`${dir}/cert.pem`),
    key: await Deno.readTextFile(`${dir}/key.pem`),
    spki: btoa(String.fromCharCode(...new Uint8Array(hash))),
  };
}
