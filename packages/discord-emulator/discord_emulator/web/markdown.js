// The web client's Markdown, as Discord renders it: message text becomes DOM nodes, never HTML.
// Loaded before client.js, whose globals ($, S, el, displayName…) it uses once the page runs.
"use strict";

// ----- Markdown, as Discord renders it -----------------------------------------------------------
//
// Discord's rules (simple-markdown's, as its client uses them): code blocks and inline code
// first (their text is never formatted), then per line headers (#, ##, ###), subtext (-#),
// lists (-, *, 1.) and quotes (> for a line, >>> for the rest of the message), then inline:
// backslash escapes, mentions, links (bare http(s) URLs, <url>, [masked](url)), **bold**,
// __underline__, *italic* / _italic_, ~~strike~~ and ||spoilers||, nested as they nest.
// The result is built as DOM nodes, never as HTML: whatever a message holds stays text.

function md(text) {
  const out = document.createDocumentFragment();
  const fence = /```(?:([\w+.-]+)\n)?\n?([\s\S]*?)```/g;
  let last = 0, m;
  text = String(text);
  while ((m = fence.exec(text))) {
    if (!m[2] && !m[1]) continue;  // ``` ``` with nothing inside is text, as on Discord
    blocks(text.slice(last, m.index).replace(/\n$/, ""), out, true);
    const pre = el("pre"), body = m[2].replace(/\n$/, "");
    pre.append(m[1] === "diff" ? diffCode(body) : el("code", "", body));
    out.append(pre);
    last = fence.lastIndex + (text[fence.lastIndex] === "\n" ? 1 : 0);  // the block ends the line
  }
  blocks(text.slice(last), out, true);
  return out;
}

// A ```diff block as Discord's client colours it: added lines (+) green, removed (-) red.
function diffCode(body) {
  const code = el("code", "diff");
  body.split("\n").forEach((line, i) => {
    if (i) code.append("\n");
    const kind = line.startsWith("+") ? "diff-add" : line.startsWith("-") ? "diff-del" : "";
    code.append(kind ? el("span", kind, line) : line);
  });
  return code;
}

// Where a note such as "(edited)" goes on the message's last line, as Discord puts it: inside
// its last paragraph, header, subtext, quote or list item; after a code block, on a line of its own.
function endOfText(content) {
  let target = content;
  for (let last = target.lastChild; last && last.nodeType === 1; last = target.lastChild) {
    if (!["DIV", "H1", "H2", "H3", "BLOCKQUOTE", "UL", "OL", "LI"].includes(last.tagName)) break;
    target = last;
  }
  return target;
}

const LIST_ITEM = /^(\s*)([-*]|\d{1,9}\.) (.*)$/;

// Lines: headers, subtext, quotes and lists are blocks; other lines are text, kept with their
// line breaks (the message box wraps with pre-wrap).
function blocks(text, parent, quotes) {
  if (!text) return;
  const lines = text.split("\n");
  let para = [];
  const flush = () => {
    if (para.length) inline(para.join("\n"), parent);
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m;
    if (quotes && (m = line.match(/^>>> ([\s\S]*)$/))) {
      flush();
      parent.append(quote([m[1], ...lines.slice(i + 1)].join("\n")));
      return;
    }
    if (quotes && /^> /.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^> /.test(lines[i])) quoted.push(lines[i++].slice(2));
      i--;
      parent.append(quote(quoted.join("\n")));
    } else if ((m = line.match(/^(#{1,3}) +(\S.*)$/))) {
      flush();
      const h = el("h" + m[1].length);
      inline(m[2], h);
      parent.append(h);
    } else if ((m = line.match(/^-# +(\S.*)$/))) {
      flush();
      const small = el("div", "subtext");
      inline(m[1], small);
      parent.append(small);
    } else if (LIST_ITEM.test(line)) {
      flush();
      const items = [], first = line.match(LIST_ITEM), ordered = /\d/.test(first[2]);
      for (; i < lines.length && LIST_ITEM.test(lines[i]); i++) {
        const item = lines[i].match(LIST_ITEM);  // a top-level item of the other kind: a new list
        if (items.length && item[1].length <= first[1].length && /\d/.test(item[2]) !== ordered) break;
        items.push(item);
      }
      i--;
      parent.append(list(items));
    } else {
      para.push(line);
    }
  }
  flush();
}

function quote(text) {
  const box = el("blockquote");
  blocks(text, box, false);  // no quote inside a quote, as on Discord
  return box;
}

// Consecutive list lines, nested by their indentation; a numbered list starts at its number.
function list(items) {
  const root = { indent: -1, node: null, children: [] };
  const stack = [root];
  for (const [, space, marker, rest] of items) {
    const indent = space.length;
    while (stack.length > 1 && indent <= stack[stack.length - 1].indent) stack.pop();
    const entry = { indent, marker, rest, children: [] };
    stack[stack.length - 1].children.push(entry);
    stack.push(entry);
  }
  const build = (entries) => {
    const ordered = /\d/.test(entries[0].marker);
    const node = el(ordered ? "ol" : "ul");
    if (ordered) node.start = parseInt(entries[0].marker, 10);
    for (const entry of entries) {
      const li = el("li");
      inline(entry.rest, li);
      if (entry.children.length) li.append(build(entry.children));
      node.append(li);
    }
    return node;
  };
  return build(root.children);
}

// Inline rules in Discord's order of precedence: [pattern, make(match, char before) → node or
// null, is a link (none inside a masked link's text)].
const INLINE_RULES = [
  [/^\\([^0-9A-Za-z\s])/, (m) => document.createTextNode(m[1])],  // \* is a plain *
  [/^(`+)([\s\S]*?[^`])\1(?!`)/, (m) => el("code", "", m[2].replace(/^ (.*) $/s, "$1"))],
  [/^<@[!&]?(\d+)>/, (m) => el("span", "mention", "@" + displayName(S.users.get(m[1])))],
  [/^<#(\d+)>/, (m) => {
    const ch = S.channels.get(m[1]);
    return el("span", "mention", "#" + (ch ? ch.name : "unknown"));
  }],
  [/^<t:(-?\d{1,13})(?::([tTdDfFR]))?>/, (m) => timestamp(Number(m[1]), m[2] || "f")],
  [/^<a?:(\w{2,32}):\d+>/, (m) => document.createTextNode(`:${m[1]}:`)],
  [/^<(https?:\/\/[^\s>]+)>/, (m) => link(m[1], document.createTextNode(m[1])), true],
  [/^\[((?:\\[\s\S]|[^\\\[\]])+)\]\(\s*<?(https?:\/\/[^\s<>()]+)>?\s*\)/, (m) => {
    const label = document.createDocumentFragment();
    inline(m[1], label, true);
    return link(m[2], label);
  }, true],
  [/^https?:\/\/[^\s<]+[^<.,:;"')\]\s]/, (m) => link(m[0], document.createTextNode(m[0])), true],
  [/^\*\*((?:\\[\s\S]|[^\\])+?)\*\*(?!\*)/, (m) => wrap("strong", m[1])],
  [/^__((?:\\[\s\S]|[^\\])+?)__(?!_)/, (m) => wrap("u", m[1])],
  [/^_((?:__|\\[\s\S]|[^\\_])+?)_(?![0-9A-Za-z_])/, (m, before) =>
    /[0-9A-Za-z_]/.test(before) ? null : wrap("em", m[1])],  // not inside snake_case
  [/^\*(?=\S)((?:\*\*|\\[\s\S]|\s+(?:\\[\s\S]|[^\s*\\]|\*\*)|[^\s*\\])+?)\*(?!\*)/, (m) => wrap("em", m[1])],
  [/^~~([\s\S]+?)~~/, (m) => wrap("s", m[1])],
  [/^\|\|([\s\S]+?)\|\|/, (m) => wrap("span", m[1], "spoiler")],
];
const PLAIN = /^[^\\`<\[h*_~|]+/;

// <t:seconds:style> as Discord's client shows it, in the reader's locale and time zone: t
// "4:21 PM", T "4:21:23 PM", d "11/25/26", D "November 25, 2026", f (no style) "November 25,
// 2026 at 4:21 PM", F with the weekday, R "in 1 hour" (kept current); the full date on hover.
// A time no Date can hold stays the text it was, as in Discord.
const TIME_STYLES = {
  t: { timeStyle: "short" }, T: { timeStyle: "medium" }, d: { dateStyle: "short" },
  D: { dateStyle: "long" }, f: { dateStyle: "long", timeStyle: "short" },
  F: { dateStyle: "full", timeStyle: "short" },
};
const RELATIVE_UNITS = [["year", 31536000], ["month", 2592000], ["day", 86400], ["hour", 3600],
  ["minute", 60], ["second", 1]];

function timestamp(seconds, style) {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) return null;
  const node = el("span", "timestamp");
  node.dataset.at = String(seconds);
  node.dataset.style = style;
  node.title = date.toLocaleString(undefined, TIME_STYLES.F);
  showTimestamp(node);
  return node;
}

function showTimestamp(node) {
  const seconds = Number(node.dataset.at);
  node.textContent = node.dataset.style === "R" ? relativeTime(seconds - Date.now() / 1000)
    : new Date(seconds * 1000).toLocaleString(undefined, TIME_STYLES[node.dataset.style]);
}

function relativeTime(seconds) {
  const [unit, size] = RELATIVE_UNITS.find(([, n]) => Math.abs(seconds) >= n) || ["second", 1];
  return new Intl.RelativeTimeFormat(undefined, { numeric: "auto" })
    .format(Math.round(seconds / size), unit);
}

// "in 5 minutes" stays true while the page is open
setInterval(() => document.querySelectorAll(".timestamp[data-style=R]").forEach(showTimestamp),
  15000);  // a run no rule can start in

function inline(text, parent, inLink = false) {
  let i = 0, plain = "";
  while (i < text.length) {
    const rest = text.slice(i);
    let done = null;
    for (const [re, make, isLink] of INLINE_RULES) {
      const m = isLink && inLink ? null : re.exec(rest);
      const node = m && make(m, text[i - 1] || "");
      if (node) { done = [m[0].length, node]; break; }
    }
    if (done) {
      if (plain) parent.append(document.createTextNode(plain));
      plain = "";
      parent.append(done[1]);
      i += done[0];
    } else {
      const run = PLAIN.exec(rest);
      const n = run ? run[0].length : 1;
      plain += text.slice(i, i + n);
      i += n;
    }
  }
  if (plain) parent.append(document.createTextNode(plain));
}

function wrap(tag, inner, className) {
  const node = el(tag, className);
  inline(inner, node);
  return node;
}

// A link opens http(s) addresses only, in a new tab, and shows where it goes on hover (a masked
// link's text can say anything).
function link(url, label) {
  const a = el("a", "link");
  a.href = url;
  a.title = url;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  a.append(label);
  return a;
}
