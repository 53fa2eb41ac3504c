// The popup: pairing, and which tabs the agent may see. The service worker keeps the state.

const $ = (id) => document.getElementById(id);

async function ask(message) {
  const answer = await chrome.runtime.sendMessage(message);
  if (answer && answer.error) throw new Error(answer.error);
  return answer;
}

function render(state) {
  $("status").textContent = state.description;
  $("status").dataset.status = state.status;
  if (document.activeElement !== $("port")) $("port").value = state.port;
  $("unpair").disabled = !state.paired;
  for (const radio of document.querySelectorAll("input[name=mode]")) radio.checked = radio.value === state.mode;
  // Chrome's WebMCP origin trial has ended: pages get document.modelContext only with the feature on.
  $("webmcp-missing").hidden = !state.tabs.some((tab) => tab.shared && tab.webmcp === false);
  const list = $("tabs");
  const key = JSON.stringify([state.mode, state.tabs]);
  if (list.dataset.key === key) return; // unchanged: keep the boxes the person is about to click
  list.dataset.key = key;
  list.replaceChildren();
  for (const tab of state.tabs) {
    const item = document.createElement("li");
    item.className = tab.shareable ? "" : "unshareable";
    item.dataset.url = tab.url;
    item.dataset.webmcp = tab.webmcp === true ? "yes" : tab.webmcp === false ? "no" : "";
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.dataset.tabId = tab.id;
    box.checked = tab.shared;
    box.disabled = !tab.shareable || state.mode !== "picked";
    box.addEventListener("change", pickChanged);
    label.append(box, ` ${tab.title || tab.url} `);
    label.title = tab.shareable ? tab.url : `${tab.url} (an extension may not debug this page)`;
    const url = document.createElement("span");
    url.className = "hint";
    url.textContent = tab.url;
    label.append(url);
    if (tab.shared && tab.webmcp === false) {
      const missing = document.createElement("span");
      missing.className = "missing";
      missing.textContent = " no WebMCP on this page (document.modelContext is missing)";
      label.append(missing);
    }
    item.append(label);
    list.append(item);
  }
}

function picked() {
  return [...document.querySelectorAll("#tabs input[type=checkbox]:checked")].map((box) => Number(box.dataset.tabId));
}

async function pickChanged() {
  render(await ask({ type: "share", mode: "picked", picked: picked() }));
}

async function modeChanged(event) {
  const mode = event.target.value;
  const message = { type: "share", mode };
  if (mode === "current") {
    const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
    message.current = tab ? tab.id : null;
  }
  if (mode === "picked") message.picked = picked();
  render(await ask(message));
}

$("pairing").addEventListener("submit", async (event) => {
  event.preventDefault();
  render(await ask({ type: "pair", port: $("port").value, code: $("code").value }));
  $("code").value = "";
});
$("open-flags").addEventListener("click", (event) => {
  event.preventDefault();
  chrome.tabs.create({ url: "chrome://flags/#enable-webmcp-testing" }); // a page may not link to chrome://
});
$("unpair").addEventListener("click", async () => render(await ask({ type: "unpair" })));
for (const radio of document.querySelectorAll("input[name=mode]")) radio.addEventListener("change", modeChanged);

async function refresh() {
  render(await ask({ type: "status" }));
}
refresh();
setInterval(refresh, 1000);
