/**
 * The app's stylesheet, served at `/style.css`: its own, small, no CDN and
 * no build step (a string, so every runtime's bundle carries it).
 *
 * @module
 */

/** The stylesheet's text. */
export const STYLESHEET: string = `:root {
  --ink: #1f2937;
  --muted: #4b5563;
  --paper: #f6f7f9;
  --card: #ffffff;
  --accent: #1d4ed8;
  --danger: #b91c1c;
  --ok-bg: #e6f4ea;
  --alert-bg: #fce8e6;
  --focus: #f59e0b;
  color-scheme: light;
}
* { box-sizing: border-box; }
body {
  margin: 0;
  background: var(--paper);
  color: var(--ink);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
nav {
  display: flex;
  flex-wrap: wrap;
  gap: 1rem;
  align-items: center;
  padding: .75rem max(1rem, calc((100% - 44rem) / 2));
  background: var(--ink);
  color: #fff;
}
nav a, nav span { color: #fff; }
nav form { margin-left: auto; }
main, .flash {
  max-width: 44rem;
  margin: 1.5rem auto;
  padding: 0 1rem;
}
main > section, main > form {
  background: var(--card);
  border: 1px solid #e5e7eb;
  border-radius: .5rem;
  padding: 1rem 1.25rem;
  margin: 1rem 0;
}
h1 { font-size: 1.6rem; margin: 0 0 1rem; }
h2 { font-size: 1.2rem; margin: 0 0 .5rem; }
a { color: var(--accent); }
.inline { display: inline; }
.flash { padding: .6rem .9rem; border-radius: .375rem; }
.notice { background: var(--ok-bg); }
.alert { background: var(--alert-bg); }
label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
input[type=email], input[type=password], input[type=text] {
  width: 100%;
  max-width: 24rem;
  padding: .5rem .6rem;
  border: 1px solid #9ca3af;
  border-radius: .375rem;
  font: inherit;
}
input[aria-invalid=true] { border-color: var(--danger); }
.field-error { color: var(--danger); margin: .25rem 0 0; }
.hint { color: var(--muted); font-size: .9rem; margin: .25rem 0 0; }
button {
  padding: .5rem 1rem;
  border: 0;
  border-radius: .375rem;
  background: var(--accent);
  color: #fff;
  font: inherit;
  cursor: pointer;
}
button.secondary { background: #e5e7eb; color: var(--ink); }
button.danger { background: var(--danger); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
table { width: 100%; border-collapse: collapse; }
th, td {
  text-align: left;
  padding: .4rem .5rem;
  border-bottom: 1px solid #e5e7eb;
  vertical-align: top;
}
td.agent { word-break: break-word; color: var(--muted); }
.current { font-weight: 600; }
#qr { width: 12rem; }
input[type=number], input[type=search] {
  width: 100%;
  max-width: 24rem;
  padding: .5rem .6rem;
  border: 1px solid #9ca3af;
  border-radius: .375rem;
  font: inherit;
}
label.check { display: inline-block; margin-right: 1rem; font-weight: 400; }
fieldset { border: 1px solid #e5e7eb; border-radius: .375rem; margin: .75rem 0; }
code.secret { display: block; padding: .5rem; background: #fef3c7; word-break: break-all; }
.impersonation {
  display: flex;
  flex-wrap: wrap;
  gap: .5rem 1rem;
  align-items: center;
  padding: .6rem max(1rem, calc((100% - 44rem) / 2));
  background: #7c2d12;
  color: #fff;
}
.impersonation p { margin: 0; }
.impersonation button { background: #fff; color: #7c2d12; font-weight: 600; }
`;
