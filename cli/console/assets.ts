/**
 * The console's only stylesheet and script, served from the CLI itself: nothing is loaded from
 * a CDN, and both ship in dist/cli with the rest of the CLI (tsc compiles this module).
 * The script does one thing: it refreshes a live page's <main> by polling its own URL.
 */

export const CONSOLE_STYLE_PATH = '/assets/console.css';
export const CONSOLE_SCRIPT_PATH = '/assets/console.js';

// Colours checked for WCAG AA (4.5:1 for text) against their backgrounds: docs/console.md.
export const CONSOLE_STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;background:#fff}
header{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center;padding:.6rem 1rem;background:#1f2937;color:#fff}
header .target{color:#d1d5db;font-size:.9rem}
header nav{display:flex;gap:1rem;margin-left:auto}
header a{color:#fff;text-underline-offset:3px}
header a[aria-current=page]{font-weight:700;text-decoration-thickness:3px}
main{padding:1rem;max-width:80rem;margin:0 auto}
h1{font-size:1.5rem;margin:.2rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
a{color:#0b57d0}
:focus-visible{outline:3px solid #b45309;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:.5rem;top:.5rem;background:#fff;color:#0b57d0;padding:.4rem;z-index:1}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #d1d5db;vertical-align:top}
th{background:#f3f4f6}
td.num,th.num{text-align:right}
.mono{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
td.mono{min-width:14rem}
.badge{display:inline-block;padding:0 .4rem;border-radius:.25rem;font-size:.85rem;font-weight:600;background:#e5e7eb;color:#1a1a1a}
.s-COMPLETED,.s-active{background:#e6f4ea;color:#0d652d}
.s-FAILED,.s-paused{background:#fdecea;color:#a50e0e}
.s-PARKED{background:#fff4e0;color:#7a4a00}
.muted{color:#4b5563}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(18rem,1fr));gap:1rem}
.card{border:1px solid #d1d5db;border-radius:.4rem;padding:.75rem 1rem}
.card h2{margin-top:0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}
dl.facts dt{color:#4b5563}dl.facts dd{margin:0}
form.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.5rem 1rem;align-items:end;margin-bottom:1rem}
label{display:flex;flex-direction:column;font-size:.9rem;gap:.15rem}
input,select,button{font:inherit;padding:.35rem .5rem;border:1px solid #6b7280;border-radius:.25rem;background:#fff;color:#1a1a1a}
button{background:#0b57d0;color:#fff;border-color:#0b57d0;cursor:pointer}
button.danger{background:#a50e0e;border-color:#a50e0e}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.75rem 0}
.actions form{margin:0}
.notice{border-left:4px solid #0b57d0;background:#eef4fe;padding:.5rem .75rem;margin:.5rem 0 1rem}
.warn{border-left-color:#a50e0e;background:#fdecea}
pre{white-space:pre-wrap;word-break:break-all;background:#f3f4f6;padding:.75rem;border-radius:.25rem;max-height:30rem;overflow:auto}
@media (max-width:40rem){main{padding:.75rem}header nav{margin-left:0}th,td{padding:.3rem}}
`;

export const CONSOLE_SCRIPT = `"use strict";
(() => {
  const main = document.getElementById('main');
  const every = Number(main && main.dataset.refresh);
  if (!main || !(every > 0)) return;
  const busy = () => {
    const a = document.activeElement;
    return a !== null && a !== main && main.contains(a) && /^(INPUT|SELECT|TEXTAREA|SUMMARY)$/.test(a.tagName);
  };
  const refresh = async () => {
    if (document.hidden || busy()) return;
    const answer = await fetch(location.href, { credentials: 'same-origin', headers: { 'x-console-refresh': '1' } });
    if (!answer.ok) return;
    const fresh = new DOMParser().parseFromString(await answer.text(), 'text/html').getElementById('main');
    if (fresh !== null && !busy()) main.innerHTML = fresh.innerHTML;
  };
  setInterval(() => { refresh().catch(() => undefined); }, every * 1000);
})();
`;
