// The web client's threads: started, archived and unarchived by the user, and the archived ones
// listed apart (the gateway sends active threads only; Discord's client fetches the others).
"use strict";

const isThread = (ch) => !!ch && (ch.type === 11 || ch.type === 12);
const isArchived = (ch) => isThread(ch) && !!(ch.thread_metadata && ch.thread_metadata.archived);

// Each text channel's archived threads, into S.channels (after GUILD_CREATE, which has none).
async function loadArchived() {
  const parents = [...S.channels.values()].filter((c) => c.type === 0);
  try {
    for (const parent of parents) {
      const { threads } = await api("GET", `/api/channels/${parent.id}/threads/archived`);
      for (const th of threads) if (!S.channels.has(th.id)) S.channels.set(th.id, th);
    }
  } catch (err) {
    toast("Could not list the archived threads: " + err.message);
  }
  renderSidebar();
  renderHeader();
}

// A thread in the header: archived, it says so, and its button unarchives it.
function renderThreadHeader(ch) {
  const archived = isArchived(ch);
  $("#archive-thread").hidden = !isThread(ch);
  $("#archive-thread").textContent = archived ? "Unarchive" : "Archive";
  $("#archive-thread").title = archived ? "Open this thread again"
    : "Archive this thread (its session ends)";
  $("#archived-label").hidden = !archived;
}

async function newThread() {
  const name = prompt("Thread name");
  if (!name) return;
  try {
    const thread = await api("POST", "/api/threads", { channel_id: S.current, name });
    S.channels.set(thread.id, thread);
    selectChannel(thread.id);
  } catch (err) {
    toast("Could not start the thread: " + err.message);
  }
}

async function archiveThread() {
  const ch = S.channels.get(S.current);
  const archived = !!(ch && ch.thread_metadata && ch.thread_metadata.archived);
  try {
    await api("POST", `/api/threads/${S.current}/archive`, { archived: !archived });
  } catch (err) {
    toast("Could not change the thread: " + err.message);
  }
}
