// The emulator's web client: a small Discord-like client for one user. No build step, no
// dependencies. It follows the gateway over a websocket (/gateway) and acts through the
// page's HTTP API (/api/...), which the server runs as this user. Text from messages becomes
// DOM text nodes, never HTML (see md()).
"use strict";

const $ = (sel) => document.querySelector(sel);
const S = {
  session: null, channels: new Map(), users: new Map(), messages: new Map(), loading: new Map(),
  current: null, seq: null, commands: [], commandsAt: 0, files: [], command: null,
};
const EPHEMERAL = 1 << 6, LOADING = 1 << 7;
const INLINE_IMAGES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

// ----- access ------------------------------------------------------------------------------

// The address `discord-bridge try` prints carries the access token in its fragment (never sent
// over HTTP). It moves into this tab's sessionStorage (this origin only: no other port of the
// host can read it, unlike a cookie, which the browser would send to all of them) and out of
// the address bar and its history entry. Every API request carries it in a header.
const ACCESS_KEY = "discord-bridge-access";

function takeAccessToken() {
  const found = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (found) {
    sessionStorage.setItem(ACCESS_KEY, decodeURIComponent(found[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(ACCESS_KEY);
}

function locked() {
  sessionStorage.removeItem(ACCESS_KEY);
  $("#app").hidden = true;
  $("#locked").hidden = false;
}

// ----- HTTP --------------------------------------------------------------------------------

async function api(method, path, body) {
  const token = sessionStorage.getItem(ACCESS_KEY) || "";
  const init = { method, headers: { Authorization: `Bearer ${token}` }, credentials: "omit" };
  if (S.actAs) init.headers["X-Act-As"] = S.actAs;  // the switcher's second user
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  const data = await resp.json().catch(() => ({}));
  if (resp.status === 401) locked();  // another run of `try` (a new token), or none given
  if (!resp.ok) throw new Error(data.message || `${resp.status} ${resp.statusText}`);
  return data;
}

function toast(text) {
  const el = $("#toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, 6000);
}

// ----- gateway -----------------------------------------------------------------------------

function connect(delay = 1000) {
  const proto = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(proto + location.host + "/gateway");
  let beat = null;
  ws.onmessage = (event) => {
    const frame = JSON.parse(event.data);
    if (frame.op === 10) {
      beat = setInterval(() => ws.send(JSON.stringify({ op: 1, d: S.seq })), frame.d.heartbeat_interval);
      const intents = (1 << 0) | (1 << 9) | (1 << 10) | (1 << 12) | (1 << 15);
      ws.send(JSON.stringify({ op: 2, d: {
        token: S.session.gateway_token, intents,
        properties: { os: "web", browser: "discord-bridge web client", device: "web" } } }));
    } else if (frame.op === 0) {
      S.seq = frame.s;
      onEvent(frame.t, frame.d);
    } else if (frame.op === 7 || frame.op === 9) {
      ws.close();
    }
  };
  ws.onclose = () => {
    clearInterval(beat);
    setStatus(false);
    setTimeout(() => connect(Math.min(delay * 2, 15000)), delay);
  };
}

function setStatus(online) {
  $("#status").className = online ? "online" : "offline";
  $("#status").title = online ? "connected" : "reconnecting…";
}

function onEvent(type, d) {
  switch (type) {
    case "READY":
      setStatus(true);
      break;
    case "GUILD_CREATE":
      for (const member of d.members || []) S.users.set(member.user.id, member.user);
      const archived = [...S.channels.values()].filter(isArchived);  // not in GUILD_CREATE
      S.channels.clear();
      for (const ch of [...archived, ...d.channels, ...(d.threads || [])]) S.channels.set(ch.id, ch);
      renderSidebar();
      if (!S.current || !S.channels.has(S.current)) selectChannel(defaultChannel());
      else loadMessages(S.current);  // catch up after a reconnect
      loadArchived();
      break;
    case "CHANNEL_CREATE": case "CHANNEL_UPDATE": case "THREAD_CREATE": case "THREAD_UPDATE":
      S.channels.set(d.id, { ...(S.channels.get(d.id) || {}), ...d });
      renderSidebar();
      if (d.id === S.current) renderHeader();
      break;
    case "CHANNEL_DELETE": case "THREAD_DELETE":
      S.channels.delete(d.id);
      renderSidebar();
      if (d.id === S.current) selectChannel(defaultChannel());
      break;
    case "MESSAGE_CREATE":
      if (d.author) S.users.set(d.author.id, d.author);
      upsertMessage(d);
      if (d.channel_id !== S.current) markUnread(d.channel_id);
      break;
    case "MESSAGE_UPDATE":
      upsertMessage(d);
      break;
    case "MESSAGE_DELETE": {
      const live = S.loading.get(d.channel_id);
      if (live) live.deleted.add(d.id);
      const list = S.messages.get(d.channel_id);
      if (list) S.messages.set(d.channel_id, list.filter((m) => m.id !== d.id));
      const el = document.getElementById("m-" + d.id);
      if (el) el.remove();
      break;
    }
    case "MESSAGE_REACTION_ADD": case "MESSAGE_REACTION_REMOVE":
      react(d, type === "MESSAGE_REACTION_ADD");
      break;
  }
}

// ----- channels ----------------------------------------------------------------------------

function defaultChannel() {
  const home = S.session.home_channel;
  if (home && S.channels.has(home)) return home;
  const text = [...S.channels.values()].filter((c) => c.type === 0);
  return text.length ? text[0].id : null;
}

function renderSidebar() {
  const list = $("#channels");
  list.textContent = "";
  const all = [...S.channels.values()];
  const byPos = (a, b) => (a.position || 0) - (b.position || 0) || a.id.localeCompare(b.id);
  const threadsOf = (id, archived) => all
    .filter((c) => isThread(c) && c.parent_id === id && isArchived(c) === archived)
    .sort((a, b) => a.id.localeCompare(b.id));
  const addThread = (th) => {
    const item = channelItem(th, "↳ " + th.name);
    item.classList.add("thread");
    if (isArchived(th)) item.classList.add("archived");
    list.append(item);
  };
  for (const ch of all.filter((c) => c.type === 0).sort(byPos)) {
    list.append(channelItem(ch, "# " + ch.name));
    threadsOf(ch.id, false).forEach(addThread);
    const archived = threadsOf(ch.id, true);
    if (archived.length) list.append(el("li", "archived-heading", "Archived threads"));
    archived.forEach(addThread);
  }
}

function channelItem(ch, label) {
  const li = document.createElement("li");
  li.textContent = label;
  li.dataset.id = ch.id;
  if (ch.id === S.current) li.classList.add("active");
  if (S.unread && S.unread.has(ch.id)) li.style.fontWeight = "700";
  li.onclick = () => { selectChannel(ch.id); $("#sidebar").classList.remove("open"); };
  return li;
}

function markUnread(id) {
  S.unread = S.unread || new Set();
  S.unread.add(id);
  renderSidebar();
}

function selectChannel(id) {
  S.current = id;
  if (S.unread) S.unread.delete(id);
  renderSidebar();
  renderHeader();
  $("#messages").textContent = "";
  if (id) loadMessages(id);
}

const PHONE = window.matchMedia("(max-width: 700px)");

function renderHeader() {
  const ch = S.channels.get(S.current);
  const thread = isThread(ch);
  $("#channel-title").textContent = ch ? (thread ? "↳ " : "# ") + ch.name : "";
  $("#new-thread").hidden = !ch || thread;
  renderThreadHeader(ch);
  // (a phone's box is narrow: the hint about / would be cut off mid-word)
  const hint = PHONE.matches ? "" : " (type / for commands)";
  $("#input").placeholder = ch ? `Message ${thread ? "" : "#"}${ch.name}${hint}` : "";
}

// A channel's history is read over REST while the gateway goes on: a message created, edited
// or deleted between the request and its answer is in the events, not (or not as it is now) in
// the answer. Those events are kept while the load runs and laid over its answer, else a
// message posted the moment a channel opens never shows (seen in CI).
async function loadMessages(id) {
  const live = { upserts: new Map(), deleted: new Set() };
  S.loading.set(id, live);
  try {
    const msgs = await api("GET", `/api/channels/${id}/messages`);
    const byId = new Map(msgs.map((m) => [m.id, m]));
    for (const m of S.messages.get(id) || []) if (m.flags & EPHEMERAL) byId.set(m.id, m);
    for (const [mid, m] of live.upserts) byId.set(mid, { ...(byId.get(mid) || {}), ...m });
    for (const mid of live.deleted) byId.delete(mid);
    S.messages.set(id, [...byId.values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1)));
    if (id === S.current) renderMessages();
  } catch (err) {
    toast("Could not load messages: " + err.message);
  } finally {
    if (S.loading.get(id) === live) S.loading.delete(id);
  }
}

// ----- messages ----------------------------------------------------------------------------

function upsertMessage(msg) {
  const live = S.loading.get(msg.channel_id);
  if (live) live.upserts.set(msg.id, { ...(live.upserts.get(msg.id) || {}), ...msg });
  const list = S.messages.get(msg.channel_id);
  if (!list) return;  // not loaded yet: the load in flight, or a later one, brings this one
  const i = list.findIndex((m) => m.id === msg.id);
  if (i >= 0) list[i] = { ...list[i], ...msg, reactions: list[i].reactions };
  else list.push(msg);
  if (msg.channel_id !== S.current) return;
  const stick = nearBottom();
  const el = renderMessage(i >= 0 ? list[i] : msg);
  const old = document.getElementById("m-" + msg.id);
  if (old) old.replaceWith(el);
  else $("#messages").append(el);
  if (stick) scrollDown();
}

// A reaction the gateway reports (anyone's, this user's included): its count, and whether
// it is this user's (\`me\`), as Discord shows it.
function react(d, add) {
  const list = S.messages.get(d.channel_id) || [];
  const msg = list.find((m) => m.id === d.message_id);
  if (!msg) return;
  const name = d.emoji.name;
  const mine = d.user_id === S.session.user.id;
  const old = (msg.reactions || []).find((r) => r.emoji.name === name);
  const count = (old ? old.count : 0) + (add ? 1 : -1);
  const me = mine ? add : !!(old && old.me);
  const reactions = (msg.reactions || []).filter((r) => r.emoji.name !== name);
  if (count > 0) reactions.push({ emoji: { name }, count, me });
  msg.reactions = reactions;
  upsertMessage(msg);
}

// The reactions a user is offered on a message (a click on a shown reaction toggles it too).
const QUICK_REACTIONS = ["✅", "❌", "👍", "👀"];

async function toggleReaction(msg, name, remove) {
  try {
    await api("POST", "/api/reactions", {
      channel_id: msg.channel_id, message_id: msg.id, emoji: name, remove });
  } catch (err) {
    toast("Could not react: " + err.message);
  }
}

function renderReactions(msg) {
  const box = el("div", "reactions");
  for (const r of msg.reactions || []) {
    const chip = el("button", "reaction" + (r.me ? " mine" : ""), `${r.emoji.name} ${r.count}`);
    chip.type = "button";
    chip.title = r.me ? "Remove your reaction" : "React with " + r.emoji.name;
    chip.onclick = () => toggleReaction(msg, r.emoji.name, !!r.me);
    box.append(chip);
  }
  const add = el("details", "add-reaction");
  const summary = el("summary", "", "☺+");
  summary.title = "Add a reaction";
  add.append(summary);
  for (const name of QUICK_REACTIONS) {
    const pick = el("button", "reaction-pick", name);
    pick.type = "button";
    pick.title = "React with " + name;
    pick.onclick = () => {
      add.open = false;
      const known = (msg.reactions || []).find((r) => r.emoji.name === name);
      if (!(known && known.me)) toggleReaction(msg, name, false);
    };
    add.append(pick);
  }
  box.append(add);
  return box;
}

function nearBottom() {
  const box = $("#messages");
  return box.scrollHeight - box.scrollTop - box.clientHeight < 120;
}

function scrollDown() {
  const box = $("#messages");
  box.scrollTop = box.scrollHeight;
}

function renderMessages() {
  const box = $("#messages");
  box.textContent = "";
  const welcome = welcomeCard();
  if (welcome) box.append(welcome);
  for (const msg of S.messages.get(S.current) || []) box.append(renderMessage(msg));
  scrollDown();
}

function displayName(user) {
  return (user && (user.global_name || user.username)) || "unknown";
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderMessage(msg) {
  const div = el("div", "message");
  div.id = "m-" + msg.id;
  div.dataset.id = msg.id;
  if (msg.flags & EPHEMERAL) div.classList.add("ephemeral");
  const ref = msg.message_reference && msg.message_reference.message_id;
  if (ref) {
    const orig = (S.messages.get(msg.channel_id) || []).find((m) => m.id === ref);
    if (orig) div.append(el("div", "reply-to", `↪ ${displayName(orig.author)}: ${orig.content.slice(0, 80)}`));
  }
  const meta = el("div", "meta");
  const author = el("span", "author" + (msg.author && msg.author.bot ? " bot" : ""), displayName(msg.author));
  meta.append(author, new Date(msg.timestamp).toLocaleTimeString());
  if (msg.flags & EPHEMERAL) meta.append(" · only you can see this");
  div.append(meta);
  if (msg.flags & LOADING) {
    div.append(el("div", "loading", `${displayName(msg.author)} is thinking…`));
  } else if (msg.content) {
    const content = el("div", "content");
    content.append(md(msg.content));  // md() builds nodes: the text stays text
    if (msg.edited_timestamp) endOfText(content).append(el("span", "edited", " (edited)"));
    div.append(content);
  }
  for (const embed of msg.embeds || []) div.append(renderEmbed(embed));
  if ((msg.attachments || []).length) {
    const box = el("div", "attachments");
    for (const att of msg.attachments) box.append(renderAttachment(att));
    div.append(box);
  }
  if ((msg.components || []).length) div.append(renderComponents(msg));
  if (!(msg.flags & (EPHEMERAL | LOADING))) div.append(renderReactions(msg));
  return div;
}

function renderEmbed(embed) {
  const box = el("div", "embed content");
  if (embed.title) box.append(el("div", "title", embed.title));
  if (embed.description) {
    const d = el("div");
    d.append(md(embed.description));
    box.append(d);
  }
  for (const field of embed.fields || []) {
    const f = el("div");
    f.append(el("strong", "", field.name + ": "));
    const v = el("span");
    v.append(md(field.value || ""));
    f.append(v);
    box.append(f);
  }
  if (embed.footer && embed.footer.text) box.append(el("div", "subtext", embed.footer.text));
  return box;
}

function renderAudio(att) {  // a voice message (or any audio file): played on the page
  const box = el("div", "attachment audio");
  const secs = Math.round(att.duration_secs || 0);
  const label = att.duration_secs != null
    ? `🎙️ ${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, "0")}`
    : `🔊 ${att.filename} (${formatSize(att.size)})`;
  box.append(el("div", "subtext", label));
  const audio = el("audio");
  audio.controls = true;
  audio.preload = "metadata";
  audio.src = localUrl(att.url);
  box.append(audio);
  return box;
}

function localUrl(url) {  // this page's address for a file: its path and key (?hm=)
  try { const u = new URL(url); return u.pathname + u.search; } catch (err) { return "#"; }
}

function renderAttachment(att) {
  if ((att.content_type || "").startsWith("audio/")) return renderAudio(att);
  const a = el("a", "attachment");
  a.href = localUrl(att.url);
  a.download = att.filename;
  a.textContent = `📎 ${att.filename} (${formatSize(att.size)})`;
  if (INLINE_IMAGES.includes(att.content_type)) {
    const img = el("img");
    img.src = a.href;
    img.alt = att.filename;
    a.append(img);
  }
  return a;
}

function formatSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

// ----- components and interactions ---------------------------------------------------------

const BUTTON_STYLES = { 1: "primary", 2: "secondary", 3: "success", 4: "danger" };

function renderComponents(msg) {
  const box = el("div", "components");
  const walk = (list, into) => {
    for (const comp of list) {
      if (comp.type === 1) {
        const row = el("div", "row");
        walk(comp.components || [], row);
        into.append(row);
      } else if (comp.type === 2) {
        into.append(renderButton(msg, comp));
      } else if (comp.type === 3) {
        into.append(renderSelect(msg, comp));
      } else if (comp.type === 10) {
        const text = el("div", "content");
        text.append(md(comp.content || ""));
        into.append(text);
      } else if (comp.components) {
        walk(comp.components, into);
      }
    }
  };
  walk(msg.components, box);
  return box;
}

function renderButton(msg, comp) {
  const label = (comp.emoji && comp.emoji.name ? comp.emoji.name + " " : "") + (comp.label || "");
  if (comp.style === 5) {
    const a = el("a", "link-button", label + " ↗");
    // As Discord: http, https and discord links only (the emulator refuses others too, and
    // the CSP would block a javascript: one: this is the third wall)
    if (!/^(https?|discord):/i.test(String(comp.url || "").trim())) return el("span", "link-button", label);
    a.href = comp.url;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    return a;
  }
  const button = el("button", BUTTON_STYLES[comp.style] || "secondary", label);
  button.type = "button";
  button.disabled = !!comp.disabled;
  button.onclick = () => interact(msg, { kind: "click", message_id: msg.id, custom_id: comp.custom_id });
  return button;
}

function renderSelect(msg, comp) {
  const box = el("details", "select");
  box.dataset.customId = comp.custom_id;
  const summary = el("summary", "", comp.placeholder || "Make a selection");
  box.append(summary);
  const multi = (comp.max_values || 1) > 1;
  const inputs = [];
  for (const opt of comp.options || []) {
    const label = el("label");
    const input = el("input");
    input.type = multi ? "checkbox" : "radio";
    input.name = "select-" + msg.id + "-" + comp.custom_id;
    input.value = opt.value;
    input.checked = !!opt.default;
    input.disabled = !!comp.disabled;
    inputs.push(input);
    label.append(input, " " + (opt.emoji && opt.emoji.name ? opt.emoji.name + " " : "") + opt.label);
    if (opt.description) label.append(el("span", "description", opt.description));
    box.append(label);
    // (as Discord's select: back to its placeholder once picked, so it can be picked again)
    if (!multi) input.onchange = () => { input.checked = false; send([opt.value]); };
  }
  function send(values) {
    box.open = false;
    interact(msg, { kind: "select", message_id: msg.id, custom_id: comp.custom_id, values });
  }
  if (multi) {
    const confirm = el("button", "primary confirm", "Confirm");
    confirm.type = "button";
    confirm.disabled = !!comp.disabled;
    confirm.onclick = () => {
      const values = inputs.filter((i) => i.checked).map((i) => i.value);
      if (values.length < (comp.min_values ?? 1) || values.length > comp.max_values) {
        toast(`Pick ${comp.min_values ?? 1} to ${comp.max_values} options`);
        return;
      }
      send(values);
    };
    box.append(confirm);
  }
  return box;
}

async function interact(msg, body) {
  // As Discord's client: the message's controls wait while the bot answers, then work again
  // (a select picked once can be picked again; a button that opened a form can open it again)
  const node = document.getElementById("m-" + msg.id);
  const controls = [...(node ? node.querySelectorAll(".components button, .components input") : [])]
    .filter((c) => !c.disabled);
  controls.forEach((c) => { c.disabled = true; });
  try {
    handleResult(await api("POST", "/api/interactions", body));
  } catch (err) {
    toast("This interaction failed: " + err.message);
  } finally {
    controls.forEach((c) => { c.disabled = false; });
  }
}

function handleResult(result) {
  if (result.response_type === 9 && result.modal) {
    openModal(result);
  } else if (result.expired || result.response_type === null) {
    toast("This interaction failed (the bot did not answer in time)");
  }
  // Ephemeral answers arrive on the gateway (to this user only); these copies are for a page
  // whose gateway was down, and never replace a newer one the gateway brought.
  for (const msg of [result.message, ...(result.followups || [])]) {
    const known = msg && (S.messages.get(msg.channel_id) || []).some((m) => m.id === msg.id);
    if (msg && msg.flags & EPHEMERAL && !known) upsertMessage(msg);
  }
}

// ----- modals ------------------------------------------------------------------------------

function openModal(result) {
  const modal = result.modal;
  $("#modal-title").textContent = modal.title || "";
  const fields = $("#modal-fields");
  fields.textContent = "";
  const readers = {};
  for (const item of modal.components || []) {
    let comp = null, label = null, description = null;
    if (item.type === 1) comp = (item.components || [])[0];
    else if (item.type === 18) { comp = item.component; label = item.label; description = item.description; }
    else if (item.type === 10) {
      const text = el("div", "content");
      text.append(md(item.content || ""));
      fields.append(text);
      continue;
    }
    if (!comp) continue;
    const id = "modal-" + comp.custom_id;
    const lab = el("label", "", label || comp.label || "");
    lab.htmlFor = id;
    fields.append(lab);
    if (description) fields.append(el("div", "subtext", description));
    if (comp.type === 4) {
      const input = el(comp.style === 2 ? "textarea" : "input");
      input.id = id;
      input.name = comp.custom_id;
      input.placeholder = comp.placeholder || "";
      input.value = comp.value || "";
      input.required = comp.required !== false;
      if (comp.max_length) input.maxLength = comp.max_length;
      if (comp.min_length) input.minLength = comp.min_length;
      fields.append(input);
      readers[comp.custom_id] = () => input.value;
    } else if (comp.type === 3) {
      const select = el("select");
      select.id = id;
      select.multiple = (comp.max_values || 1) > 1;
      for (const opt of comp.options || []) {
        const o = el("option", "", opt.label);
        o.value = opt.value;
        o.selected = !!opt.default;
        select.append(o);
      }
      fields.append(select);
      readers[comp.custom_id] = () => [...select.selectedOptions].map((o) => o.value);
    }
  }
  const backdrop = $("#modal-backdrop");
  backdrop.hidden = false;
  const first = fields.querySelector("input, textarea, select");
  if (first) first.focus();
  $("#modal").onsubmit = async (event) => {
    event.preventDefault();
    const values = {};
    for (const [key, read] of Object.entries(readers)) values[key] = read();
    backdrop.hidden = true;
    try {
      handleResult(await api("POST", "/api/interactions", {
        kind: "modal", interaction_id: result.interaction_id, custom_id: modal.custom_id, values }));
    } catch (err) {
      toast("This interaction failed: " + err.message);
    }
  };
  $("#modal-cancel").onclick = () => { backdrop.hidden = true; };
}

// ----- acting as another user (`try`: a member with a role) -------------------------------

function userSwitcher() {
  const others = S.session.also_as || [];
  if (!others.length) return;
  const pick = document.createElement("select");
  pick.id = "act-as";
  pick.setAttribute("aria-label", "Act as");
  const roleNames = (user) => (user.roles || []).map((id) => S.session.roles[id] || id);
  for (const user of [S.session.user, ...others]) {
    S.users.set(user.id, user);
    const roles = roleNames(user);
    const label = displayName(user) + (roles.length ? ` (${roles.join(", ")})` : "");
    pick.append(new Option(label, user.id === S.session.user.id ? "" : user.id));
  }
  pick.onchange = () => { S.actAs = pick.value || null; };
  $("#me-name").replaceWith(pick);
}

// ----- start -------------------------------------------------------------------------------

async function start() {
  if (!takeAccessToken()) return locked();
  S.session = await api("GET", "/api/session");
  S.users.set(S.session.user.id, S.session.user);
  $("#guild-title").textContent = S.session.guild.name;
  $("#me-name").textContent = displayName(S.session.user);
  userSwitcher();
  $("#composer").onsubmit = (event) => { event.preventDefault(); sendMessage(); };
  $("#input").addEventListener("keydown", (event) => {
    if (pickerKey(event)) return;
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); sendMessage(); }
    if (event.key === "Escape" && S.command) clearCommand();
  });
  $("#input").addEventListener("input", () => { autosize(); updatePicker(); updateCounter(); });
  $("#command-form").addEventListener("keydown", (event) => {
    if (event.key === "Escape") { clearCommand(); $("#input").focus(); }
  });
  $("#file-input").onchange = (event) => {
    S.files.push(...event.target.files);
    event.target.value = "";
    renderFiles();
  };
  $("#new-thread").onclick = newThread;
  $("#archive-thread").onclick = archiveThread;
  $("#toggle-sidebar").onclick = () => $("#sidebar").classList.toggle("open");
  $("#close-sidebar").onclick = () => $("#sidebar").classList.remove("open");
  PHONE.addEventListener("change", renderHeader);
  $("#messages").addEventListener("click", (event) => {
    const spoiler = event.target.closest(".spoiler");
    if (spoiler) spoiler.classList.add("shown");
  });
  connect();
}

start().catch((err) => toast("Could not start: " + err.message));
