/**
 * Server-rendered HTML for the operator's console: an escaping template tag and the page frame.
 * Every value put into a page goes through `html`, so a key or an error text can never be markup.
 */
import { CONSOLE_SCRIPT_PATH, CONSOLE_STYLE_PATH } from './assets.ts';

/** Markup that is already safe: made by `html`, never by concatenating text. */
export class SafeHtml {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text escaped for an element or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

type Part = SafeHtml | string | number | undefined | null | false | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof SafeHtml) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** A template tag: literal parts stay markup, every interpolated value is escaped (arrays joined). */
export function html(strings: TemplateStringsArray, ...values: readonly Part[]): SafeHtml {
  return new SafeHtml(strings.reduce((out, s, i) => out + s + (i < values.length ? render(values[i]) : ''), ''));
}

/** `2026-12-07 15:04:05` in UTC, or a dash. */
export function when(ms: number | undefined): string {
  return ms === undefined || !Number.isFinite(ms) ? '-' : new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** An age in the largest unit that fits: `42 s`, `7 min`, `3 h`, `2 d`. */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/** A query string from the defined values. */
export function query(values: Readonly<Record<string, string | undefined>>): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== '') q.set(name, value);
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

export interface PageOptions {
  readonly title: string;
  /** Which item of the navigation is this page's. */
  readonly nav: 'overview' | 'deliveries' | 'dlq' | 'line' | 'none';
  /** The receiver, shown in the header. */
  readonly target: string;
  /** Seconds between refreshes of <main> while the page is shown; @default - not refreshed */
  readonly refreshSeconds?: number;
}

function navLink(href: string, label: string, current: boolean): SafeHtml {
  return html`<a href="${href}"${current ? new SafeHtml(' aria-current="page"') : ''}>${label}</a>`;
}

/** The whole page: header, navigation and the `main` the script refreshes in place. */
export function page(options: PageOptions, main: SafeHtml): string {
  const live = options.refreshSeconds === undefined ? '' : html` data-refresh="${options.refreshSeconds}"`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · retryproof console</title>
<link rel="stylesheet" href="${CONSOLE_STYLE_PATH}"><script src="${CONSOLE_SCRIPT_PATH}" defer></script></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><strong>retryproof</strong> <span class="target">${options.target}</span>
<nav aria-label="Screens">${navLink('/', 'Overview', options.nav === 'overview')}${navLink('/deliveries', 'Deliveries', options.nav === 'deliveries')}${navLink('/dlq', 'DLQ', options.nav === 'dlq')}${navLink('/line', 'Lines', options.nav === 'line')}</nav></header>
<main id="main" tabindex="-1"${live}><h1>${options.title}</h1>
${main}</main></body></html>
`.text;
}
