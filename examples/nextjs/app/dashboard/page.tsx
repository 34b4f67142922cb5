import { redirect } from "next/navigation";
import { portcullis } from "../../lib/auth";

export const dynamic = "force-dynamic";

// A page of the app's own: the middleware let a signed session through;
// here it is resolved again with the revocation store, and the user read.
export default async function Dashboard() {
  const { auth } = await portcullis();
  const user = await auth.user();
  if (user === null) redirect("/login");
  return (
    <main>
      <h1>Dashboard</h1>
      <p>Signed in as {user.email}.</p>
      <p>
        <a href="/account">Your account</a>
      </p>
      <form method="post" action="/logout">
        <button>Sign out</button>
      </form>
    </main>
  );
}
