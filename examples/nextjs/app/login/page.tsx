// Plain HTML forms posting to the route handlers: they work without
// JavaScript, and the handlers answer 303 with the session cookie.
export default async function Login(
  { searchParams }: { searchParams: Promise<{ error?: string }> },
) {
  const { error } = await searchParams;
  return (
    <main>
      <h1>Sign in</h1>
      {error ? <p role="alert">Wrong email or password</p> : null}
      <form method="post" action="/api/login">
        <input name="email" type="email" autoComplete="username" required />
        <input name="password" type="password" autoComplete="current-password" required />
        <button>Sign in</button>
      </form>
      <h2>Register</h2>
      <form method="post" action="/api/register">
        <input name="email" type="email" autoComplete="username" required />
        <input name="password" type="password" autoComplete="new-password" required />
        <button>Register</button>
      </form>
    </main>
  );
}
