// Copied from packages/accounts/views/style.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The app's stylesheet, served at `/style.css`: its own, small, no CDN and
 * no build step (a string, so every runtime's bundle carries it). The pages
 * need no inline style (the Content Security Policy may say
 * `style-src 'self'`) and no script to look right.
 *
 * @module
 */

/** The stylesheet's text. */
export const STYLESHEET: string = `:root {
  --ink: #1f2937;
  --muted: #4b5563;
  --paper: #f6f7f9;
  --card: #ffffff;
  --line: #e5e7eb;
  --field: #9ca3af;
  --accent: #1d4ed8;
  --danger: #b91c1c;
  --ok-bg: #e6f4ea;
  --alert-bg: #fce8e6;
  --badge-bg: #e0e7ff;
  --badge-ink: #1e3a8a;
  --focus: #f59e0b;
  --column: 44rem;
  --gutter: 1rem;
  color-scheme: light;
}
* { box-sizing: border-box; }
body {
  margin: 0;
  background: var(--paper);
  color: var(--ink);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  overflow-wrap: break-word;
}
/* The bar's content lines up with the main column's. */
body > nav {
  display: flex;
  flex-wrap: wrap;
  gap: .5rem 1rem;
  align-items: center;
  padding: .75rem max(var(--gutter), calc((100% - var(--column)) / 2 + var(--gutter)));
  background: var(--ink);
  color: #fff;
}
body > nav a, body > nav span { color: #fff; }
body > nav span { overflow-wrap: anywhere; }
body > nav form { margin-left: auto; }
main {
  max-width: var(--column);
  margin: 1.5rem auto;
  padding: 0 var(--gutter);
}
main > section, main > form {
  background: var(--card);
  border: 1px solid var(--line);
  border-radius: .5rem;
  padding: 1rem 1.25rem;
  margin: 1rem 0;
}
h1 { font-size: 1.6rem; margin: 0 0 1rem; }
h2 { font-size: 1.2rem; margin: 0 0 .5rem; }
h3 { font-size: 1.05rem; margin: 0 0 .25rem; }
a { color: var(--accent); }
code { overflow-wrap: anywhere; }
.inline { display: inline; }
.flash { margin: 1rem 0; padding: .6rem .9rem; border-radius: .375rem; }
.notice { background: var(--ok-bg); }
.alert { background: var(--alert-bg); }
label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
/* Every text field, with or without a type attribute. */
input:not([type]), input[type=text], input[type=email], input[type=password],
input[type=search], input[type=tel], input[type=url], input[type=number] {
  width: 100%;
  max-width: 24rem;
  padding: .5rem .6rem;
  border: 1px solid var(--field);
  border-radius: .375rem;
  background: #fff;
  color: inherit;
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
button.secondary {
  background: #fff;
  color: var(--ink);
  border: 1px solid var(--field);
  padding: calc(.5rem - 1px) calc(1rem - 1px);
}
button.danger { background: var(--danger); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.visually-hidden {
  position: absolute;
  width: 1px;
  height: 1px;
  overflow: hidden;
  clip: rect(0 0 0 0);
  clip-path: inset(50%);
  white-space: nowrap;
}

/* /account: a short list of the page's parts, then one card each. */
.toc ul {
  display: flex;
  flex-wrap: wrap;
  gap: .25rem 1.25rem;
  margin: 0;
  padding: 0;
  list-style: none;
}
.group > h2 { margin-bottom: .75rem; }
.item + .item {
  border-top: 1px solid var(--line);
  margin-top: 1rem;
  padding-top: 1rem;
}
.item > p, .group > p { margin: .25rem 0; }
.state { color: var(--muted); }
.danger-zone { border-color: #f1b5b5; }
.danger-zone > h2 { color: var(--danger); }
/* A form behind its action's name: opened by a click, no script. */
details.action { margin: .5rem 0 0; }
details.action > summary {
  display: inline-block;
  padding: calc(.5rem - 1px) calc(1rem - 1px);
  border: 1px solid var(--field);
  border-radius: .375rem;
  background: #fff;
  cursor: pointer;
}
details.action > summary::before { content: "\\25B8\\00A0"; }
details.action[open] > summary::before { content: "\\25BE\\00A0"; }
details.action > form > p:last-child { margin-bottom: 0; }
.danger-zone details.action > summary { color: var(--danger); border-color: var(--danger); }
/* A device's name, its full User-Agent string one click away. */
details.agent { display: inline; }
details.agent > summary {
  display: inline;
  cursor: pointer;
  text-decoration: underline dotted;
  text-underline-offset: .2em;
}
details.agent[open] > summary { margin-right: .5rem; }
details.agent > code {
  display: block;
  margin: .25rem 0;
  color: var(--muted);
  font-size: .85rem;
}
.list {
  margin: 0;
  padding: 0;
  list-style: none;
}
.list > li {
  display: flex;
  flex-wrap: wrap;
  gap: .25rem 1rem;
  align-items: center;
  justify-content: space-between;
  padding: .6rem 0;
  border-bottom: 1px solid var(--line);
}
.list > li:last-child { border-bottom: 0; }
.list > li > :first-child { flex: 1 1 14rem; min-width: 0; }
.list > li > details[open] { flex-basis: 100%; }
.list form { margin: 0; }
.meta { display: block; color: var(--muted); font-size: .9rem; }
.device {
  display: flex;
  flex-wrap: wrap;
  gap: 0 .5rem;
  align-items: baseline;
}
.badge {
  display: inline-block;
  padding: 0 .5rem;
  border-radius: 1rem;
  background: var(--badge-bg);
  color: var(--badge-ink);
  font-size: .85rem;
  font-weight: 600;
  vertical-align: .1em;
}
.events {
  margin: .25rem 0 0;
  padding: 0;
  list-style: none;
}
.events > li { padding: .25rem 0; }
details.more > summary { cursor: pointer; color: var(--accent); margin: .25rem 0; }
#qr { width: 12rem; max-width: 100%; }
label.check { display: inline-block; margin-right: 1rem; font-weight: 400; }
fieldset { border: 1px solid var(--line); border-radius: .375rem; margin: .75rem 0; }
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
