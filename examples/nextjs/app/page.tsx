import { portcullis } from "../lib/auth";

export const dynamic = "force-dynamic";

// A public page that still knows who is looking.
export default async function Home() {
  const { auth } = await portcullis();
  const me = await auth.identity();
  return (
    <main>
      <h1>portcullis on Next.js</h1>
      {me
        ? <p>Signed in. <a href="/dashboard">Your dashboard</a></p>
        : (
          <p>
            <a href="/login">Sign in</a> or <a href="/register">register</a>
          </p>
        )}
    </main>
  );
}
