import { redirect } from "next/navigation";
import { auth, credentials, notes } from "../../lib/auth";
import { addNote } from "./actions";

// A server component: the middleware let a signed session through; here the
// session is resolved again with the revocation store, so a signed-out
// cookie is sent to /login.
export default async function Dashboard() {
  const me = await auth.identity();
  if (me === null) redirect("/login");
  const user = await credentials.findById(me.subject);
  const mine = [...notes.values()].filter((n) => n.owner === me.subject);
  return (
    <main>
      <h1>Notes of {user?.email}</h1>
      <ul>
        {mine.map((n) => <li key={n.id}>{n.text}</li>)}
      </ul>
      <form action={addNote}>
        <input name="text" required maxLength={1000} />
        <button>Add</button>
      </form>
      <form method="post" action="/api/logout">
        <button>Sign out</button>
      </form>
    </main>
  );
}
