// The web client's composer: messages, files and slash commands as Discord's client takes them.
// Loaded before client.js, whose globals ($, S, el, api, toast, md…) it uses once the page runs.
"use strict";


// Discord's limit on a message's text; its client says so and keeps the text (nothing is sent).
const MAX_LENGTH = 2000;

async function sendMessage() {
  const input = $("#input");
  const content = input.value;
  if (S.command) return runCommand();
  if (!content.trim() && !S.files.length) return;
  if (await typedCommand(content)) return;
  if (content.length > MAX_LENGTH) {
    toast(`Your message is too long: ${content.length} characters, Discord takes ${MAX_LENGTH}. ` +
      "Shorten it, or send the text as a file (+).");
    return;
  }
  const attachments = await Promise.all(S.files.map(readFile));
  try {
    await api("POST", "/api/messages", { channel_id: S.current, content, attachments });
    dismissWelcome();  // the user knows where to type now
    input.value = "";
    S.files = [];
    renderFiles();
    autosize();
    updateCounter();
  } catch (err) {
    toast("Not sent: " + err.message);
  }
}

// "/name" sent as one line is a slash command, as in Discord's client, never text for Claude:
// a known one runs (or asks for its options), another is said unknown and nothing is sent.
// True when the text was taken so.
async function typedCommand(content) {
  const typed = /^\/([\w-]+(?: [\w-]+)*)\s*$/.exec(content);
  if (!typed) return false;
  await loadCommands();
  const words = typed[1].toLowerCase();
  const cmd = pickable(S.commands).find((c) => c.name === words);
  if (cmd) {
    pickCommand(cmd, true);
    return true;
  }
  toast(`Unknown command /${words.split(" ")[0]}: nothing was sent. ` +
    "(To send it to Claude as text, start with \\/.)");
  return true;
}

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({
      filename: file.name, content_type: file.type || null,
      data: String(reader.result).split(",", 2)[1] || "" });
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

function renderFiles() {
  const box = $("#pending-files");
  box.textContent = "";
  for (const f of S.files) box.append(el("span", "", `📎 ${f.name} (${formatSize(f.size)})`));
}

async function loadCommands() {
  if (Date.now() - S.commandsAt < 10000) return;
  try {
    S.commands = await api("GET", "/api/commands");
    S.commandsAt = Date.now();
  } catch (err) {
    toast("Could not load the commands: " + err.message);
  }
}

async function updatePicker() {
  const picker = $("#command-picker");
  const wanting = () => {
    const text = $("#input").value;
    return S.command || !text.startsWith("/") || text.includes("\n") ? null : text;
  };
  if (!wanting()) {
    picker.hidden = true;
    return;
  }
  await loadCommands();
  const text = wanting();  // what is typed now (the commands may have taken a moment)
  if (!text) {
    picker.hidden = true;
    return;
  }
  const wanted = text.slice(1).toLowerCase().replace(/\s+/g, " ");
  const found = pickable(S.commands).filter((c) => c.name.startsWith(wanted))
    .sort((a, b) => a.name.localeCompare(b.name));
  picker.textContent = "";
  found.forEach((cmd, i) => {
    const item = el("div", i === 0 ? "active" : "", "/" + cmd.name);
    item.dataset.name = cmd.name;
    item.append(el("span", "description", cmd.description || ""));
    item.onclick = () => chooseCommand(cmd);
    item.onmouseenter = () => highlight(i);
    picker.append(item);
  });
  S.picked = found;
  picker.hidden = !found.length;
}

// The picker's keys, as Discord's: arrows move the highlight, Tab completes the highlighted
// command, Enter completes it too and runs it when it is typed out and needs nothing more.
// True when the key was the picker's.
function pickerKey(event) {
  const picker = $("#command-picker");
  if (picker.hidden || !S.picked || !S.picked.length) return false;
  const items = [...picker.children];
  const at = Math.max(0, items.findIndex((item) => item.classList.contains("active")));
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    highlight((at + (event.key === "ArrowDown" ? 1 : -1) + items.length) % items.length);
  } else if (event.key === "Tab" || (event.key === "Enter" && !event.shiftKey)) {
    const cmd = S.picked[at];
    const typed = $("#input").value.slice(1).trim().toLowerCase().replace(/\s+/g, " ");
    pickCommand(cmd, event.key === "Enter" && typed === cmd.name);
  } else if (event.key === "Escape") {
    picker.hidden = true;
  } else {
    return false;
  }
  event.preventDefault();
  return true;
}

function highlight(index) {
  const items = [...$("#command-picker").children];
  items.forEach((item, i) => item.classList.toggle("active", i === index));
  if (items[index]) items[index].scrollIntoView({ block: "nearest" });
}

// The command chosen; run at once when asked to (Enter on it typed out) and no option is
// required, else its options are asked for.
function pickCommand(cmd, run) {
  chooseCommand(cmd);
  if (run && !(cmd.options || []).some((o) => o.required)) runCommand();
}

// Characters left, shown near Discord's limit (as its client does), red past it.
function updateCounter() {
  const left = MAX_LENGTH - $("#input").value.length;
  const counter = $("#counter");
  counter.hidden = left > 200;
  counter.textContent = String(left);
  counter.classList.toggle("over", left < 0);
}

// What the picker lists: each chat command, or each of its subcommands ("project add"), with
// the options the user fills in.
function pickable(commands) {
  const out = [];
  const walk = (cmd, name, node) => {
    const subs = (node.options || []).filter((o) => o.type === 1 || o.type === 2);
    if (!subs.length) {
      out.push({ name, description: node.description, options: node.options || [],
        application_id: cmd.application_id });
      return;
    }
    for (const sub of subs) walk(cmd, `${name} ${sub.name}`, sub);
  };
  for (const cmd of commands) {
    if (cmd.type === 1 || cmd.type === undefined) walk(cmd, cmd.name, cmd);
  }
  return out;
}

function chooseCommand(cmd) {
  S.command = { cmd, readers: {} };
  $("#command-picker").hidden = true;
  $("#input").value = "/" + cmd.name;
  const form = $("#command-form");
  form.textContent = "";
  const head = el("div", "", "/" + cmd.name);
  head.append(el("span", "description", cmd.description || ""));
  const cancel = el("button", "", "✕");
  cancel.type = "button";
  cancel.onclick = clearCommand;
  head.append(" ", cancel);
  form.append(head);
  for (const opt of cmd.options || []) {
    const label = el("label", "", opt.name + (opt.required ? " *" : ""));
    let input;
    if (opt.choices && opt.choices.length) {
      input = el("select");
      if (!opt.required) input.append(el("option", "", ""));
      for (const choice of opt.choices) {
        const o = el("option", "", choice.name);
        o.value = choice.value;
        input.append(o);
      }
    } else if (opt.type === 5) {
      input = el("select");
      for (const v of ["", "true", "false"]) input.append(el("option", "", v));
    } else if (opt.type === 7) {  // a channel (or thread) of the server
      input = el("select");
      if (!opt.required) input.append(el("option", "", ""));
      for (const ch of [...S.channels.values()].filter((c) => [0, 11, 12].includes(c.type))) {
        const o = el("option", "", (ch.type === 0 ? "# " : "↳ ") + ch.name);
        o.value = ch.id;
        input.append(o);
      }
    } else {
      input = el("input");
      input.type = opt.type === 4 || opt.type === 10 ? "number" : "text";
    }
    input.name = opt.name;
    input.title = opt.description || "";
    input.required = !!opt.required;
    if (opt.autocomplete && input.tagName === "INPUT") suggest(cmd, opt, input, label);
    if (opt.min_value !== undefined) input.min = opt.min_value;
    if (opt.max_value !== undefined) input.max = opt.max_value;
    if (opt.min_length) input.minLength = opt.min_length;
    if (opt.max_length) input.maxLength = opt.max_length;
    label.append(input);
    if (opt.description) label.append(el("span", "description", opt.description));
    form.append(label);
    S.command.readers[opt.name] = () => {
      const raw = input.value;
      if (raw === "") return undefined;
      if (opt.type === 4) return parseInt(raw, 10);
      if (opt.type === 10) return Number(raw);
      if (opt.type === 5) return raw === "true";
      return raw;
    };
  }
  form.hidden = false;
  const first = form.querySelector("input, select");
  if (first) first.focus();
}

// The bot's suggestions for an option as it is typed (Discord's autocomplete), in a datalist.
function suggest(cmd, opt, input, label) {
  const list = el("datalist");
  list.id = "suggest-" + opt.name;
  input.setAttribute("list", list.id);
  label.append(list);
  let timer = null;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const options = {};
      for (const [name, read] of Object.entries(S.command ? S.command.readers : {})) {
        const value = read();
        if (value !== undefined) options[name] = value;
      }
      options[opt.name] = input.value;
      try {
        const result = await api("POST", "/api/interactions", {
          kind: "autocomplete", channel_id: S.current, name: cmd.name,
          application_id: cmd.application_id, options, focused: opt.name });
        list.textContent = "";
        for (const choice of result.choices || []) {
          const o = el("option", "", choice.name);
          o.value = choice.value;
          list.append(o);
        }
      } catch (err) {
        toast("No suggestions: " + err.message);
      }
    }, 250);
  });
}

function clearCommand() {
  S.command = null;
  S.picked = null;
  $("#command-form").hidden = true;
  $("#input").value = "";
}

async function runCommand() {
  const { cmd, readers } = S.command;
  const invalid = [...$("#command-form").querySelectorAll("input, select")]
    .find((i) => !i.checkValidity());
  if (invalid) {
    toast(`${invalid.name}: ${invalid.validationMessage}`);
    invalid.focus();
    return;
  }
  const options = {};
  for (const [name, read] of Object.entries(readers)) {
    const value = read();
    if (value !== undefined) options[name] = value;
  }
  clearCommand();
  try {
    handleResult(await api("POST", "/api/interactions", {
      kind: "command", channel_id: S.current, name: cmd.name,
      application_id: cmd.application_id, options }));
  } catch (err) {
    toast("This command failed: " + err.message);
  }
}

function autosize() {
  const input = $("#input");
  input.style.height = "auto";
  input.style.height = Math.min(input.scrollHeight, 200) + "px";
}
