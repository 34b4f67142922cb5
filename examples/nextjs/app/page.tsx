import Link from "next/link";
import { auth } from "../lib/auth";

// A public page that still knows who is looking.
export default async function Home() {
  const me = await auth.identity();
  return (
    <main>
      <h1>portcullis on Next.js</h1>
      {me
        ? <p>Signed in. <Link href="/dashboard">Your notes</Link></p>
        : <p><Link href="/login">Sign in or register</Link></p>}
    </main>
  );
}
