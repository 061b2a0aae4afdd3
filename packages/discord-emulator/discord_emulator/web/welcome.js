// The first visit's welcome, at the top of the project's channel: what to type, three things to
// try, where the docs are. The page's own (no message of the bot: the emulator's messages last
// one run of `try`, so a posted welcome would greet the user again at every start); shown until
// the user closes it or sends a first message, remembered in this browser (localStorage).
"use strict";

const WELCOME_KEY = "discord-bridge-welcomed";
const TRY_FIRST = [
  ["Ask about the project: ", "what does this project do?", ""],
  ["Type / for the bridge's commands, e.g. ", "/usage", " (cost and limits), /peek (Claude's screen), /diff (what changed)"],
  ["Start a second Claude beside this one with ", "+ Thread", " (top right); Archive ends it"],
];

function welcomed() {
  try { return localStorage.getItem(WELCOME_KEY) === "1"; } catch (err) { return true; }
}

function dismissWelcome() {
  try { localStorage.setItem(WELCOME_KEY, "1"); } catch (err) { /* private mode: once a tab */ }
  const card = $("#welcome");
  if (card) card.remove();
}

function welcomeCard() {
  if (welcomed() || S.current !== defaultChannel()) return null;
  const ch = S.channels.get(S.current);
  const card = el("div", "welcome");
  card.id = "welcome";
  card.append(el("h2", "", "Welcome to discord-bridge"));
  card.append(el("p", "", `This is #${ch ? ch.name : "your project"}, your project's channel. ` +
    "Type below: your message goes to Claude Code, running in tmux on this machine, and its " +
    "replies, questions and permission prompts come back here, as they will in Discord."));
  card.append(el("p", "", "Three things to try:"));
  const list = el("ol");
  for (const [before, example, after] of TRY_FIRST) {
    const item = el("li", "", before);
    const code = el("code", "", example);
    if (!example.startsWith("+")) {
      code.classList.add("example");
      code.title = "Put it in the message box";
      code.onclick = () => { $("#input").value = example; $("#input").focus(); updatePicker(); };
    }
    item.append(code, after);
    list.append(item);
  }
  card.append(list);
  card.append(el("p", "", "#control-panel shows every session. The docs: discord-bridge's " +
    "README.md, “Trying it without Discord” and “Using it”, and discord-bridge --help."));
  const close = el("button", "primary", "Got it");
  close.type = "button";
  close.onclick = dismissWelcome;
  card.append(close);
  return card;
}
